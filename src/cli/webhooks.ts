import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { Connections } from "../auth/Connections.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { Subscriptions, SubscriptionsLive, topicsOf } from "../changes/Subscriptions.js"
import { describeError } from "../sync/RunOutcome.js"
import { SyncSettings } from "../sync/SyncSettings.js"
import { SyncLayer } from "./app.js"
import { resolveAccounts } from "./accountSelection.js"
import { withHelp } from "./help.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { alignedTable } from "./table.js"

const url = Options.text("url").pipe(
  Options.withPseudoName("URL"),
  Options.withDescription("Where the service sends the events: serve's /webhooks (default: the origin of SERVICE_REDIRECT_URI + /webhooks)"),
  Options.optional
)
const accounts = Options.text("account").pipe(Options.withPseudoName("ID|NAME"), Options.withDescription("Only this account, by id or name (repeatable; default: every active one)"), Options.repeated)

/** `webhooks subscribe`: every active account subscribed (webhookSubscriptionCreate) to the topics of the synced streams. */
const subscribeCommand = withHelp(Command.make("subscribe", { url, accounts }, (options) =>
  Effect.gen(function* () {
    const target = Option.isSome(options.url) ? options.url.value : `${new URL((yield* OAuthClient).redirectUri).origin}/webhooks`
    const streams = (yield* SyncSettings).streams.defaults
    const active = (yield* (yield* Connections).list()).filter((c) => c.status === "active")
    const named = resolveAccounts("--account", options.accounts, active)
    if (named instanceof ExitWith) return yield* named
    const chosen = options.accounts.length > 0 ? active.filter((c) => named.includes(c.accountId)) : active
    yield* Console.error(`subscribing ${chosen.length} account(s) to ${topicsOf(streams).length} topic(s) at ${target}`)
    const rows: Array<Array<string>> = [["ACCOUNT", "TOPIC", "OUTCOME", "DETAIL"]]
    let failed = false
    for (const account of chosen) {
      const results = yield* (yield* Subscriptions).subscribe(account.accountId, target, streams).pipe(Effect.either)
      if (results._tag === "Left") {
        failed = true
        rows.push([account.accountId, "-", "failed", describeError(results.left)])
        continue
      }
      for (const r of results.right) {
        failed ||= r.outcome === "failed"
        rows.push([account.accountId, r.topic, r.outcome, r.detail ?? ""])
      }
    }
    yield* Console.log(alignedTable(rows))
    if (failed) return yield* new ExitWith({ code: ExitCodes.failure, message: "some subscriptions failed (see DETAIL)" })
  }).pipe(Effect.provide(SubscriptionsLive.pipe(Layer.provideMerge(SyncLayer))))
), {
  purpose: "Subscribe every active account to the change webhooks of the synced streams.",
  details: "Subscribes to the topics (CLIENT_*, JOB_*, ...) at serve's /webhooks through webhookSubscriptionCreate; topics already subscribed are left as they are.",
  examples: ["account-sync webhooks subscribe", "account-sync webhooks subscribe --url https://account-sync.example.com/webhooks"]
})

export const webhooksCommand = withHelp(Command.make("webhooks").pipe(Command.withSubcommands([subscribeCommand])), {
  purpose: "Manage the service's webhook subscriptions of the connected accounts.",
  examples: ["account-sync webhooks subscribe"],
  subcommands: [["subscribe", subscribeCommand]]
})

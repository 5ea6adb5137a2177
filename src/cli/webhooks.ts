import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { Connections } from "../auth/Connections.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { Subscriptions, SubscriptionsLive, topicsOf } from "../sync/events/Subscriptions.js"
import { describeError } from "../sync/RunOutcome.js"
import { SyncSettings } from "../sync/SyncSettings.js"
import { SyncLayer } from "./app.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { alignedTable } from "./table.js"

const url = Options.text("url").pipe(
  Options.withDescription("Where the service sends the events: serve's /webhooks (default: the origin of SERVICE_REDIRECT_URI + /webhooks)"),
  Options.optional
)
const accounts = Options.text("account").pipe(Options.repeated, Options.withDescription("Only this account (repeatable; default: every active one)."))

/** `webhooks subscribe`: every active account subscribed (webhookSubscriptionCreate) to the topics of the synced streams. */
const subscribeCommand = Command.make("subscribe", { url, accounts }, (options) =>
  Effect.gen(function* () {
    const target = Option.isSome(options.url) ? options.url.value : `${new URL((yield* OAuthClient).redirectUri).origin}/webhooks`
    const streams = (yield* SyncSettings).streams.defaults
    const active = (yield* (yield* Connections).list()).filter((c) => c.status === "active")
    const chosen = options.accounts.length > 0 ? active.filter((c) => options.accounts.includes(c.accountId)) : active
    const missing = options.accounts.filter((id) => !active.some((c) => c.accountId === id))
    if (missing.length > 0) return yield* new ExitWith({ code: ExitCodes.usage, message: `webhooks subscribe: no active connection ${missing.join(", ")}` })
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
).pipe(
  Command.withDescription(
    "Subscribe every active account to the webhook topics of the synced streams (CLIENT_*, JOB_*, ...) at serve's /webhooks; topics already subscribed are left as they are."
  )
)

export const webhooksCommand = Command.make("webhooks").pipe(
  Command.withDescription("Manage the service's webhook subscriptions of the connected accounts."),
  Command.withSubcommands([subscribeCommand])
)

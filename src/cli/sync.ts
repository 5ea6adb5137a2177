import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { Alerts } from "../health/AlertWebhook.js"
import { withMetricsFile } from "../observability/prometheus.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { SyncLayer } from "./app.js"
import { withHelp } from "./help.js"
import { reportDrainAndExit } from "./eventsSummary.js"
import { accountIdsOf, runAndReport, runOptions } from "./runOptions.js"

const eventsOnly = Options.boolean("events-only").pipe(
  Options.withDescription("Only apply the change events the webhook inbox queued (for deployments without `serve`), then exit.")
)

/** Applies the queued change events of the selected accounts (all with events by default). */
const applyEvents = (accounts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const consumer = yield* EventConsumer
    const ids = yield* accountIdsOf(accounts)
    const reports = ids.length > 0 ? yield* Effect.forEach(ids, consumer.drain) : yield* consumer.drainAll()
    yield* (yield* Alerts).check
    yield* reportDrainAndExit(reports)
  }).pipe(withMetricsFile, Effect.provide(SyncLayer))

/** `sync`: one run for every active connection (the cron entry point): incremental, or full when one is due. */
export const syncCommand = withHelp(
  Command.make("sync", { ...runOptions, eventsOnly }, ({ eventsOnly, ...args }) => (eventsOnly ? applyEvents(args.accounts) : runAndReport("sync", args))),
  {
    purpose: "Bring every active connection up to date (the cron entry point).",
    details:
      "Each stream gets an incremental pass, or a full pass when one is due (SYNC_FULL_PASS_EVERY) or unfinished; a summary table ends the run. With --events-only it applies the change events the webhook inbox queued instead. Exit 0 all synced, 1 a failure, 3 an account needs reconnecting.",
    examples: ["account-sync sync", 'account-sync sync --account "Northwind Landscaping" --stream jobs --stream invoices']
  }
)

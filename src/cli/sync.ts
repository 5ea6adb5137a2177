import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { withMetricsFile } from "../observability/prometheus.js"
import { EventConsumer } from "../sync/events/EventConsumer.js"
import { SyncLayer } from "./app.js"
import { reportDrainAndExit } from "./eventsSummary.js"
import { runAndReport, runOptions } from "./runOptions.js"

const eventsOnly = Options.boolean("events-only").pipe(
  Options.withDescription("Only apply the change events the webhook inbox queued (for deployments without `serve`), then exit.")
)

/** Applies the queued change events of the selected accounts (all with events by default). */
const applyEvents = (accounts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const consumer = yield* EventConsumer
    const reports = accounts.length > 0 ? yield* Effect.forEach(accounts, consumer.drain) : yield* consumer.drainAll()
    yield* reportDrainAndExit(reports)
  }).pipe(Effect.provide(SyncLayer), withMetricsFile)

/** `sync`: one run for every active connection (the cron entry point): incremental, or full when one is due. */
export const syncCommand = Command.make("sync", { ...runOptions, eventsOnly }, ({ eventsOnly, ...args }) =>
  eventsOnly ? applyEvents(args.accounts) : runAndReport("sync", args)
).pipe(
  Command.withDescription(
    "Sync every active connection: an incremental pass per stream, or a full pass when one is due or in progress; with --events-only, apply the queued change events instead. Exit 0 all synced, 3 some accounts need reconnecting, 1 a failure."
  )
)

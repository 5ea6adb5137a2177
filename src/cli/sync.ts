import { Command, Options } from "@effect/cli"
import { withMetricsFile } from "../observability/prometheus.js"
import { Effect, Option } from "effect"
import { SyncAppLive } from "../sync/SyncLive.js"
import { SyncRunner } from "../sync/SyncRunner.js"
import { reportAndExit } from "../sync/summary.js"
import { streamNames } from "../sync/streams/index.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"

const accounts = Options.text("account").pipe(Options.repeated, Options.withDescription("Only this account (repeatable)."))
const streams = Options.choice("stream", streamNames).pipe(Options.repeated, Options.withDescription("Only this stream (repeatable)."))
const concurrency = Options.integer("concurrency").pipe(
  Options.optional,
  Options.withDescription("Accounts synced at once (default SYNC_CONCURRENCY or 4).")
)

/** `sync`: one run for every active connection (the cron entry point): incremental, or full when one is due. */
export const syncCommand = Command.make("sync", { accounts, streams, concurrency }, (args) =>
  Effect.gen(function* () {
    if (Option.isSome(args.concurrency) && args.concurrency.value < 1) {
      return yield* new ExitWith({ code: ExitCodes.usage, message: "--concurrency: expected a whole number of at least 1" })
    }
    const runner = yield* SyncRunner
    const reports = yield* runner.run({
      mode: "sync",
      accounts: args.accounts,
      streams: args.streams,
      ...(Option.isSome(args.concurrency) ? { concurrency: args.concurrency.value } : {})
    })
    yield* reportAndExit(reports)
  }).pipe(Effect.provide(SyncAppLive), withMetricsFile)
).pipe(
  Command.withDescription(
    "Sync every active connection: an incremental pass per stream, or a full pass when one is due or in progress. Exit 0 all synced, 3 some accounts need reconnecting, 1 a failure."
  )
)

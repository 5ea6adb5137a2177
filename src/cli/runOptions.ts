import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { withMetricsFile } from "../observability/prometheus.js"
import type { Mode } from "../sync/PassPlan.js"
import { streamNames } from "../sync/streams/index.js"
import { type RunRequest, SyncRunner } from "../sync/SyncRunner.js"
import { SyncLayer } from "./app.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { reportAndExit } from "./summary.js"

/** The options `sync` and `backfill` share. */
export const runOptions = {
  accounts: Options.text("account").pipe(Options.repeated, Options.withDescription("Only this account (repeatable).")),
  streams: Options.choice("stream", streamNames).pipe(Options.repeated, Options.withDescription("Only this stream (repeatable).")),
  concurrency: Options.integer("concurrency").pipe(
    Options.optional,
    Options.withDescription("Accounts synced at once (default SYNC_CONCURRENCY or 4).")
  )
}

export interface RunArgs {
  readonly accounts: ReadonlyArray<string>
  readonly streams: ReadonlyArray<string>
  readonly concurrency: Option.Option<number>
}

/** One run of `mode` with the shared options, its summary and exit code; METRICS_FILE written on the way out. */
export const runAndReport = (mode: Mode, args: RunArgs, extra: Partial<RunRequest> = {}) =>
  Effect.gen(function* () {
    if (Option.isSome(args.concurrency) && args.concurrency.value < 1) {
      return yield* new ExitWith({ code: ExitCodes.usage, message: "--concurrency: expected a whole number of at least 1" })
    }
    const runner = yield* SyncRunner
    const reports = yield* runner.run({
      mode,
      accounts: args.accounts,
      streams: args.streams,
      ...(Option.isSome(args.concurrency) ? { concurrency: args.concurrency.value } : {}),
      ...extra
    })
    yield* reportAndExit(reports)
  }).pipe(Effect.provide(SyncLayer), withMetricsFile)

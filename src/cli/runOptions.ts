import { Options } from "@effect/cli"
import { Clock, Effect, Option } from "effect"
import { Connections } from "../auth/Connections.js"
import { DatabaseConfig } from "../config.js"
import { databaseAddress } from "../db/databaseAddress.js"
import { Alerts } from "../health/AlertWebhook.js"
import { withMetricsFile } from "../observability/prometheus.js"
import type { Mode } from "../sync/pass/PassPlan.js"
import { streamNames } from "../sync/streams/index.js"
import { type RunRequest, SyncRunner } from "../run/SyncRunner.js"
import { checkStreams, resolveAccounts } from "./accountSelection.js"
import { SyncLayer } from "./app.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { reportAndExit } from "./summary.js"
import { terminalTableWidth } from "./table.js"

/** The options `sync` and `backfill` share. */
export const runOptions = {
  accounts: Options.text("account").pipe(
    Options.withPseudoName("ID|NAME"),
    Options.withDescription("Only this account, by id or name (repeatable; default: every active connection)"),
    Options.repeated
  ),
  streams: Options.text("stream").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription(`Only this stream (repeatable): ${streamNames.join(", ")} (default: SYNC_STREAMS, else all)`),
    Options.repeated
  ),
  concurrency: Options.integer("concurrency").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Accounts synced at once (default: SYNC_CONCURRENCY, else 4)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the run's summary as JSON (ids, absolute times, every figure)")),
  wide: Options.boolean("wide").pipe(Options.withDescription("Print every column of the summary, ids included, however wide"))
}

export interface RunArgs {
  readonly accounts: ReadonlyArray<string>
  readonly streams: ReadonlyArray<string>
  readonly concurrency: Option.Option<number>
  readonly json: boolean
  readonly wide: boolean
}

/** Bad usage that needs no database: said before anything is opened or created. */
export const checkRunArgs = (args: Pick<RunArgs, "streams" | "concurrency">) =>
  Effect.gen(function* () {
    if (Option.isSome(args.concurrency) && args.concurrency.value < 1) {
      return yield* new ExitWith({ code: ExitCodes.usage, message: "--concurrency: expected a whole number of at least 1" })
    }
    const badStream = checkStreams("--stream", args.streams, streamNames)
    if (badStream !== undefined) return yield* badStream
  })

/** The ids `--account` names among the connections (exit 2 when one names none). */
export const accountIdsOf = (given: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (given.length === 0) return given
    const resolved = resolveAccounts("--account", given, yield* (yield* Connections).list())
    return resolved instanceof ExitWith ? yield* resolved : resolved
  })

/**
 * One run of `mode` with the shared options, the alerts it raised (ALERT_WEBHOOK_URL), its summary and exit code;
 * METRICS_FILE written on the way out (the state gauges read before the database closes).
 */
export const runAndReport = (mode: Mode, args: RunArgs, extra: Partial<RunRequest> = {}) =>
  checkRunArgs(args).pipe(
    Effect.zipRight(
      Effect.gen(function* () {
        const accounts = yield* accountIdsOf(args.accounts)
        const runner = yield* SyncRunner
        const startedAt = yield* Clock.currentTimeMillis
        const reports = yield* runner.run({
          mode,
          accounts,
          streams: args.streams,
          ...(Option.isSome(args.concurrency) ? { concurrency: args.concurrency.value } : {}),
          ...extra
        })
        const durationMs = (yield* Clock.currentTimeMillis) - startedAt
        yield* (yield* Alerts).check
        const database = yield* DatabaseConfig
        yield* reportAndExit(reports, {
          mode,
          database: databaseAddress(database.url, database.dataDir),
          durationMs,
          startedAt: new Date(startedAt),
          json: args.json,
          wide: args.wide,
          maxWidth: terminalTableWidth()
        })
      }).pipe(withMetricsFile, Effect.provide(SyncLayer))
    )
  )

import { Clock, Context, Effect, Layer } from "effect"
import type { PassKind } from "../sync/model.js"
import type { RunCounts } from "./Runs.js"

/** The account's leaky bucket as mirrored now: what sets the pace of a long pass. */
export interface BucketNow {
  readonly restoreRate: number
  readonly available: number
}

/** Where one stream of one account stands: after each landed batch, and once more when it ends (`done`). */
export interface ProgressSnapshot {
  readonly accountId: string
  readonly accountName: string
  readonly stream: string
  /** The stream's place among the account's streams in this run: `number` of `streams` (1-based). */
  readonly streamNumber: number
  readonly streams: number
  readonly kind: PassKind
  readonly runId: number
  readonly counts: RunCounts
  readonly startedAtMs: number
  /** The rows the service holds (a full pass, asked at its start when a display shows it). */
  readonly expectedRows?: number
  /** Rows of this pass landed by an earlier run (a resumed pass). */
  readonly landedBefore: number
  /** Points a row costs: measured so far, else the stream's estimate. */
  readonly pointsPerRow: number
  /** Points a full page asks per row (what the budget reserves; the measured cost is a fraction of it). */
  readonly requestedPointsPerRow: number
  readonly bucket?: BucketNow
  /** The stream's outcome, when it has ended. */
  readonly done?: string
}

/** The streams an account's run will make, with the rows each holds at the service (asked at the account's start). */
export interface AccountPlan {
  readonly accountId: string
  readonly streams: ReadonlyArray<{ readonly stream: string; readonly rows: number | undefined; readonly requestedPointsPerRow: number }>
}

/** A run of many accounts: how many, and how many at once. */
export interface RunPlan {
  readonly accounts: number
  readonly concurrency: number
}

export interface ProgressShape {
  /** Whether the display shows totals: a full pass then asks the service for its count at the start. */
  readonly wantsTotals: boolean
  readonly report: (snapshot: ProgressSnapshot) => Effect.Effect<void>
  /** The account's run is over: nothing of it stays on a live display. */
  readonly accountEnded: (accountId: string) => Effect.Effect<void>
  /** What the account's run will read (a display with totals shows the account's time left from it). */
  readonly accountPlanned: (plan: AccountPlan) => Effect.Effect<void>
  /** What the run will do (a display shows the run's time left from it). */
  readonly runPlanned: (plan: RunPlan) => Effect.Effect<void>
}

/** Where a run tells how it is doing: a live display on a terminal, structured log lines otherwise. */
export class Progress extends Context.Tag("account-sync/Progress")<Progress, ProgressShape>() {}

export const rowsPerSecond = (rows: number, ms: number) => (ms > 0 ? Math.round((rows * 1000) / ms) : 0)

/**
 * Log lines annotated with accountId, stream and runId: one at INFO when a stream ends (with its counts), one per
 * landed batch at DEBUG only, so a piped run says one line per stream.
 */
export const ProgressLog = Layer.succeed(
  Progress,
  Progress.of({
    wantsTotals: false,
    report: (s) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const log = s.done ? Effect.logInfo(`${s.stream} ${s.done}`) : Effect.logDebug(`${s.stream} page landed`)
        return log.pipe(
          Effect.annotateLogs({
            accountId: s.accountId,
            stream: s.stream,
            runId: s.runId,
            kind: s.kind,
            pages: s.counts.pages,
            rows: s.counts.rows,
            rowsWritten: s.counts.rowsWritten,
            rowsDeleted: s.counts.rowsDeleted,
            rowsPerSecond: rowsPerSecond(s.counts.rows, now - s.startedAtMs),
            points: Math.round(s.counts.costPoints),
            throttleWaitMs: Math.round(s.counts.throttleWaitMs),
            ...(s.done ? { durationMs: now - s.startedAtMs } : {})
          })
        )
      }),
    accountEnded: () => Effect.void,
    accountPlanned: () => Effect.void,
    runPlanned: () => Effect.void
  })
)

/** Nothing at all (benchmarks). */
export const ProgressSilent = Layer.succeed(
  Progress,
  Progress.of({ wantsTotals: false, report: () => Effect.void, accountEnded: () => Effect.void, accountPlanned: () => Effect.void, runPlanned: () => Effect.void })
)

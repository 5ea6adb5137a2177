import type { DuringBackfillResult } from "./freshnessDuringBackfill.js"

export interface FreshnessOptions {
  readonly accounts: number
  readonly jobsPerAccount: number
  /** The steady stream of edits: this many per second, spread over the accounts in turn, for `seconds`. */
  readonly editsPerSecond: number
  readonly seconds: number
  /** The burst that measures the webhook answer time: this many deliveries per second for `burstSeconds`. */
  readonly burstPerSecond: number
  readonly burstSeconds: number
  /**
   * The load the burst is answered under: this many `worker` processes (WORKERS=true, serve enqueuing for them) each
   * backfilling an account of `burstLoadJobs` jobs (~200 rows/s each) on the same Postgres.
   */
  readonly burstLoadWorkers: number
  readonly burstLoadJobs: number
}

export interface FreshnessResult {
  readonly accounts: number
  readonly jobsPerAccount: number
  readonly editsPerSecond: number
  readonly seconds: number
  readonly edits: number
  /** Distinct jobs edited in the steady phase. */
  readonly changedRows: number
  /** Event-to-warehouse lag: from the edit (the admin call) to the row landed (its synced_at), over the changed rows. */
  readonly p50Seconds: number
  readonly p99Seconds: number
  readonly maxSeconds: number
  /** Points the service charged the consumer in the steady phase, per changed row. */
  readonly pointsPerChangedRow: number
  readonly points: number
  /** What one job costs in a page (its fields; the query's own point not counted). */
  readonly nodeCost: number
  readonly ratioToNodeCost: number
  /** p99 of serve's answer time to a webhook (measured at the sender, the emulator) in the burst. */
  readonly webhookAnswerP99Ms: number
  readonly webhookAnswerP99MsSteady: number
  readonly burst: {
    readonly deliveries: number
    /** The rate the sender reached: deliveries over the time from the burst's start to the last delivery started. */
    readonly perSecond: number
    readonly p50Ms: number
    readonly p99Ms: number
    readonly maxMs: number
    /** Deliveries answered 2xx whose event is not in webhook_events (serve said it was recorded and it was not). */
    readonly lost: number
    /** Sent again (first attempt: no answer in the sender's timeout, a refused connection, a 5xx): not in p50/p99, which time the attempt answered; a failure to a service that does not retry. */
    readonly retried: number
    /** Worker processes backfilling through the burst, and the rows their backfills landed while it was sent. */
    readonly loadWorkers: number
    readonly loadRowsDuringBurst: number
  }
  readonly polling: {
    readonly everyMinutes: number
    readonly p50Seconds: number
    readonly p99Seconds: number
    readonly pointsPerChangedRow: number
    readonly points: number
    /** Wall time of the incremental `sync` of every account over the same edits (added to the wait for the poll). */
    readonly runSeconds: number
  }
  /** Event-to-warehouse lag of the load accounts while their backfills run (freshnessDuringBackfill.ts). */
  readonly duringBackfillP99Seconds: number
  readonly duringBackfill: DuringBackfillResult
}


/**
 * Polling every `periodSec` from a schedule whose phase is unknown (uniform): for each edit, the wait until the next
 * poll over every phase of a one-second grid, plus the poll's own run time; every (edit, phase) pair is one sample.
 */
export const pollingLags = (editOffsetsSec: ReadonlyArray<number>, periodSec: number, runSec: number): ReadonlyArray<number> => {
  const lags: Array<number> = []
  for (const t of editOffsetsSec) {
    for (let phase = 0.5; phase < periodSec; phase++) {
      const next = phase + Math.ceil((t - phase) / periodSec) * periodSec
      lags.push(next - t + runSec)
    }
  }
  return lags
}

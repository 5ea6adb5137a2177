import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import type { PassKind } from "./Warehouse.js"

export type RunOutcome = "succeeded" | "failed" | "revoked" | "interrupted" | "skipped"

export interface RunCounts {
  readonly pages: number
  readonly rows: number
  readonly rowsWritten: number
  readonly rowsDeleted: number
  readonly costPoints: number
  readonly throttleWaitMs: number
  readonly throttled: number
}

export const zeroCounts: RunCounts = { pages: 0, rows: 0, rowsWritten: 0, rowsDeleted: 0, costPoints: 0, throttleWaitMs: 0, throttled: 0 }

export interface RunsShape {
  readonly start: (accountId: string, stream: string, kind: PassKind) => Effect.Effect<number, SqlError.SqlError>
  readonly finish: (
    runId: number,
    outcome: RunOutcome,
    counts: RunCounts,
    error?: string
  ) => Effect.Effect<void, SqlError.SqlError>
  /** Counts so far, so `status` shows a run in progress (and a killed run keeps what it did). */
  readonly progress: (runId: number, counts: RunCounts) => Effect.Effect<void, SqlError.SqlError>
  /** A run that never started (account locked by another process): recorded as `skipped`. */
  readonly skipped: (accountId: string, stream: string, kind: PassKind, reason: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Runs of the account still `running` belong to a process that died (we hold the account's lock now):
   * they become `interrupted`.
   */
  readonly closeAbandoned: (accountId: string) => Effect.Effect<number, SqlError.SqlError>
}

/** One `sync_runs` row per account and stream pass: counts, cost used, throttle waits, outcome. */
export class Runs extends Context.Tag("account-sync/Runs")<Runs, RunsShape>() {}

const IdRow = Schema.Array(Schema.Struct({ id: Schema.Union(Schema.Number, Schema.NumberFromString) }))

/**
 * Every statement is retried when the connection is lost: each is one statement, and a repeat of an UPDATE that
 * did commit changes nothing. (An INSERT whose acknowledgement was lost can leave a second `running` row behind;
 * the account's next run closes it as interrupted.)
 */
export const makeRuns = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const runs: RunsShape = {
    start: (accountId, stream, kind) =>
      sql`INSERT INTO sync_runs (account_id, stream, kind) VALUES (${accountId}, ${stream}, ${kind}) RETURNING id`.pipe(
        Effect.flatMap((rows) => Effect.orDie(Schema.decodeUnknown(IdRow)(rows))),
        Effect.map((rows) => rows[0]!.id)
      ),
    progress: (runId, c) =>
      Effect.asVoid(sql`
        UPDATE sync_runs SET pages = ${c.pages}, rows = ${c.rows}, rows_written = ${c.rowsWritten},
          cost_points = ${Math.round(c.costPoints)}, throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled}
        WHERE id = ${runId}`),
    finish: (runId, outcome, c, error) =>
      Effect.asVoid(sql`
        UPDATE sync_runs SET finished_at = now(), outcome = ${outcome}, pages = ${c.pages}, rows = ${c.rows},
          rows_written = ${c.rowsWritten}, rows_deleted = ${c.rowsDeleted}, cost_points = ${Math.round(c.costPoints)},
          throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled}, error = ${error ?? null}
        WHERE id = ${runId}`),
    skipped: (accountId, stream, kind, reason) =>
      Effect.asVoid(sql`
        INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error)
        VALUES (${accountId}, ${stream}, ${kind}, now(), 'skipped', ${reason})`),
    closeAbandoned: (accountId) =>
      sql`UPDATE sync_runs SET outcome = 'interrupted', finished_at = now(), error = 'the process running it stopped'
          WHERE account_id = ${accountId} AND outcome = 'running' RETURNING id`.pipe(Effect.map((rows) => rows.length))
  }
  return Runs.of({
    start: (accountId, stream, kind) => retryOnConnectionLoss(runs.start(accountId, stream, kind)),
    finish: (runId, outcome, counts, error) => retryOnConnectionLoss(runs.finish(runId, outcome, counts, error)),
    progress: (runId, counts) => retryOnConnectionLoss(runs.progress(runId, counts)),
    skipped: (accountId, stream, kind, reason) => retryOnConnectionLoss(runs.skipped(accountId, stream, kind, reason)),
    closeAbandoned: (accountId) => retryOnConnectionLoss(runs.closeAbandoned(accountId))
  })
})

export const RunsLive = Layer.effect(Runs, makeRuns)

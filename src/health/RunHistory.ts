import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { rowsOrDie } from "../db/rows.js"
import { shownError, shownOutcome } from "../run/Runs.js"
import type { StreamRunStatus } from "./StreamStatus.js"

/** One row of `sync_runs` as `status --runs` shows it (a run whose process is gone: interrupted). */
export interface PastRun extends Omit<StreamRunStatus, "overheadPoints"> {
  readonly id: number
  readonly accountId: string
  readonly stream: string
  readonly throttleWaitMs: number
}

/** Which runs: of these accounts and streams (none: all), only failed ones, the newest `limit`. */
export interface RunHistoryQuery {
  readonly accounts: ReadonlyArray<string>
  readonly streams: ReadonlyArray<string>
  readonly failedOnly: boolean
  readonly limit: number
}

const Row = Schema.Struct({
  id: Schema.NumberFromString,
  account_id: Schema.String,
  stream: Schema.String,
  kind: Schema.String,
  outcome: Schema.String,
  started_at: Schema.DateFromSelf,
  finished_at: Schema.NullOr(Schema.DateFromSelf),
  rows: Schema.Number,
  rows_written: Schema.Number,
  rows_deleted: Schema.Number,
  cost_points: Schema.NumberFromString,
  throttle_wait_ms: Schema.NumberFromString,
  error: Schema.NullOr(Schema.String)
})

/** The run history of `sync_runs`, newest first (`status --runs`); reads only. */
export class RunHistory extends Context.Tag("account-sync/RunHistory")<
  RunHistory,
  { readonly list: (query: RunHistoryQuery) => Effect.Effect<ReadonlyArray<PastRun>, SqlError.SqlError> }
>() {}

export const RunHistoryLive = Layer.effect(
  RunHistory,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findAll({
      Request: Schema.Struct({ accounts: Schema.Array(Schema.String), streams: Schema.Array(Schema.String), failedOnly: Schema.Boolean, limit: Schema.Number }),
      Result: Row,
      execute: (q) => {
        const where = [
          ...(q.accounts.length > 0 ? [sql.in("r.account_id", q.accounts)] : []),
          ...(q.streams.length > 0 ? [sql.in("r.stream", q.streams)] : []),
          ...(q.failedOnly ? [sql`r.outcome = 'failed'`] : [])
        ]
        return sql`
          SELECT r.id::text AS id, r.account_id, r.stream, r.kind, ${shownOutcome(sql)} AS outcome, r.started_at, r.finished_at, r.rows,
            r.rows_written, r.rows_deleted, r.cost_points::text AS cost_points, r.throttle_wait_ms::text AS throttle_wait_ms, ${shownError(sql)} AS error
          FROM sync_runs r ${where.length > 0 ? sql`WHERE ${sql.and(where)}` : sql``}
          ORDER BY r.started_at DESC, r.id DESC LIMIT ${q.limit}`
      }
    })
    const list = (query: RunHistoryQuery) =>
      Effect.map(rowsOrDie(find(query)), (rows) =>
        rows.map(
          (r): PastRun => ({
            id: r.id,
            accountId: r.account_id,
            stream: r.stream,
            kind: r.kind,
            outcome: r.outcome,
            startedAt: r.started_at,
            finishedAt: r.finished_at,
            rows: r.rows,
            rowsWritten: r.rows_written,
            rowsDeleted: r.rows_deleted,
            costPoints: r.cost_points,
            throttleWaitMs: r.throttle_wait_ms,
            error: r.error
          })
        )
      )
    return RunHistory.of({ list })
  })
)

import { SqlClient, type SqlError, SqlSchema, type Statement } from "@effect/sql"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import type { PassKind } from "./model.js"
import type { RunOutcome } from "./RunOutcome.js"

export interface RunCounts {
  readonly pages: number
  readonly rows: number
  readonly rowsWritten: number
  readonly rowsDeleted: number
  readonly costPoints: number
  readonly throttleWaitMs: number
  readonly throttled: number
  /** Points spent on being exact: rows read again to join pages, pages asked again, the end-of-pass checks. */
  readonly overheadPoints: number
  /** Rows about to be marked deleted that the end-of-pass check found alive at the service. */
  readonly rowsConfirmed: number
}

export const zeroCounts: RunCounts = {
  pages: 0,
  rows: 0,
  rowsWritten: 0,
  rowsDeleted: 0,
  costPoints: 0,
  throttleWaitMs: 0,
  throttled: 0,
  overheadPoints: 0,
  rowsConfirmed: 0
}

export interface RunsShape {
  readonly start: (accountId: string, stream: string, kind: PassKind) => Effect.Effect<number, SqlError.SqlError>
  readonly finish: (runId: number, outcome: RunOutcome, counts: RunCounts, error?: string) => Effect.Effect<void, SqlError.SqlError>
  /** Counts so far, so `status` shows a run in progress (and a killed run keeps what it did). */
  readonly progress: (runId: number, counts: RunCounts) => Effect.Effect<void, SqlError.SqlError>
  /** A run that never started (account locked by another process): recorded as `skipped`. */
  readonly skipped: (accountId: string, stream: string, kind: PassKind, reason: string) => Effect.Effect<void, SqlError.SqlError>
  /** A run that failed before its stream began (the account's token or account query failed): recorded as `failed`. */
  readonly failedBeforeStart: (accountId: string, stream: string, kind: PassKind, error: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Runs of the account still `running` belong to a process that died (we hold the account's lock now):
   * they become `interrupted`.
   */
  readonly closeAbandoned: (accountId: string) => Effect.Effect<number, SqlError.SqlError>
  /** The run's process is alive: its heartbeat (every `runHeartbeatEvery` while it runs). */
  readonly beat: (runId: number) => Effect.Effect<void, SqlError.SqlError>
}

/** How often a running run's process writes its heartbeat. */
export const runHeartbeatEvery = Duration.seconds(15)
/** A `running` run whose heartbeat (else its start) is older than this belongs to a process that is gone: six beats missed. */
export const runGoneAfter = Duration.seconds(90)
/** Why a read model shows a `running` row as interrupted. */
export const goneRunError = "its process stopped (no heartbeat for 90 s); the next run of the account resumes the pass"

/**
 * A run's outcome as read models show it (`r` is the sync_runs row): `running` only while its process beats, else
 * `interrupted`; the row itself stays until the account's next run closes it (read models never write).
 */
export const shownOutcome = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql.literal(
    `CASE WHEN r.outcome = 'running' AND coalesce(r.heartbeat_at, r.started_at) < now() - interval '${Duration.toSeconds(runGoneAfter)} seconds' THEN 'interrupted' ELSE r.outcome END`
  )
/** The error a read model shows with `shownOutcome`. */
export const shownError = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql.literal(
    `CASE WHEN r.outcome = 'running' AND coalesce(r.heartbeat_at, r.started_at) < now() - interval '${Duration.toSeconds(runGoneAfter)} seconds' THEN '${goneRunError.replaceAll("'", "''")}' ELSE r.error END`
  )

/** One `sync_runs` row per account and stream pass: counts, cost used, throttle waits, outcome. */
export class Runs extends Context.Tag("account-sync/Runs")<Runs, RunsShape>() {}

const IdRow = Schema.Struct({ id: Schema.Union(Schema.Number, Schema.NumberFromString) })

/**
 * Every method is one statement, retried when the connection is lost: a repeat of an UPDATE that did commit changes
 * nothing. (An INSERT whose acknowledgement was lost can leave a second `running` row behind; the account's next run
 * closes it as interrupted.)
 */
export const RunsLive = Layer.effect(
  Runs,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String, kind: Schema.String }),
      Result: IdRow,
      execute: ({ accountId, stream, kind }) => sql`INSERT INTO sync_runs (account_id, stream, kind, heartbeat_at) VALUES (${accountId}, ${stream}, ${kind}, now()) RETURNING id`
    })
    const close = SqlSchema.findAll({
      Request: Schema.String,
      Result: IdRow,
      execute: (accountId) => sql`
        UPDATE sync_runs SET outcome = 'interrupted', finished_at = now(), error = 'the process running it stopped'
        WHERE account_id = ${accountId} AND outcome = 'running' RETURNING id`
    })
    return Runs.of(
      retryingOnConnectionLoss({
        start: (accountId: string, stream: string, kind: PassKind) =>
          Effect.map(rowsOrDie(insert({ accountId, stream, kind })), (row) => row.id),
        progress: (runId: number, c: RunCounts) =>
          Effect.asVoid(sql`
            UPDATE sync_runs SET pages = ${c.pages}, rows = ${c.rows}, rows_written = ${c.rowsWritten},
              cost_points = ${Math.round(c.costPoints)}, throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled},
              overhead_points = ${Math.round(c.overheadPoints)}
            WHERE id = ${runId}`),
        finish: (runId: number, outcome: RunOutcome, c: RunCounts, error?: string) =>
          Effect.asVoid(sql`
            UPDATE sync_runs SET finished_at = now(), outcome = ${outcome}, pages = ${c.pages}, rows = ${c.rows},
              rows_written = ${c.rowsWritten}, rows_deleted = ${c.rowsDeleted}, cost_points = ${Math.round(c.costPoints)},
              throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled}, overhead_points = ${Math.round(c.overheadPoints)},
              rows_confirmed = ${c.rowsConfirmed}, error = ${error ?? null}
            WHERE id = ${runId}`),
        skipped: (accountId: string, stream: string, kind: PassKind, reason: string) =>
          Effect.asVoid(sql`
            INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error)
            VALUES (${accountId}, ${stream}, ${kind}, now(), 'skipped', ${reason})`),
        failedBeforeStart: (accountId: string, stream: string, kind: PassKind, error: string) =>
          Effect.asVoid(sql`
            INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error)
            VALUES (${accountId}, ${stream}, ${kind}, now(), 'failed', ${error})`),
        closeAbandoned: (accountId: string) => Effect.map(rowsOrDie(close(accountId)), (rows) => rows.length),
        beat: (runId: number) => Effect.asVoid(sql`UPDATE sync_runs SET heartbeat_at = now() WHERE id = ${runId} AND outcome = 'running'`)
      })
    )
  })
)

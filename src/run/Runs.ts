import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import { Context, Duration, Effect, FiberRef, Layer, Option, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { currentAccountLease, leaseEpoch, leaseFence, leaseHeld } from "../sync/AccountLeases.js"
import { AccountLockLost } from "../sync/errors.js"
import type { LandingStep } from "../sync/landing/LandingStep.js"
import type { PassKind } from "../sync/model.js"
import type { RunOutcome } from "../sync/RunOutcome.js"

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

/** Whether two runs' counts are the same, as `sync_runs` records them (points rounded). */
export const sameCounts = (a: RunCounts, b: RunCounts): boolean =>
  a.pages === b.pages &&
  a.rows === b.rows &&
  a.rowsWritten === b.rowsWritten &&
  a.rowsDeleted === b.rowsDeleted &&
  Math.round(a.costPoints) === Math.round(b.costPoints) &&
  Math.round(a.throttleWaitMs) === Math.round(b.throttleWaitMs) &&
  a.throttled === b.throttled &&
  Math.round(a.overheadPoints) === Math.round(b.overheadPoints) &&
  a.rowsConfirmed === b.rowsConfirmed

/**
 * Under an account's lease (AccountLeases), every write of a run's row checks in its own statement that the lease is
 * still the run's, and writes nothing once it moved: a run that lost its account leaves its row to the new holder.
 */
export interface RunsShape {
  /** The run's row, with the epoch of the lease it runs under; fails when the lease moved. */
  readonly start: (accountId: string, stream: string, kind: PassKind) => Effect.Effect<number, SqlError.SqlError | AccountLockLost>
  /**
   * `start`'s INSERT as a statement to run inside another (returning the run's `id`, no row once the lease moved): a
   * pass begins its checkpoint in the same round trip (Checkpoints.beginIncremental).
   */
  readonly startStatement: (accountId: string, stream: string, kind: PassKind) => Effect.Effect<Statement.Fragment>
  readonly finish: (runId: number, outcome: RunOutcome, counts: RunCounts, error?: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * `finish` as succeeded, as a step of the page statement of the batch that ends the run's pass (Warehouse.land's
   * `then`): `counts` are the run's once the batch landed, but for the rows it writes, counted in the statement
   * (`landed`) and added to `counts.rowsWritten`. Written only while the pass was in progress (`pass`), the lease held.
   */
  readonly finishStep: (runId: number, counts: RunCounts) => LandingStep
  /** Counts so far, so `status` shows a run in progress (and a killed run keeps what it did). */
  readonly progress: (runId: number, counts: RunCounts) => Effect.Effect<void, SqlError.SqlError>
  /** A run that never started (account locked by another process): recorded as `skipped`. */
  readonly skipped: (accountId: string, stream: string, kind: PassKind, reason: string) => Effect.Effect<void, SqlError.SqlError>
  /** A run that failed before its stream began (the account's token or account query failed): recorded as `failed`. */
  readonly failedBeforeStart: (accountId: string, stream: string, kind: PassKind, error: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Runs of the account still `running` under an earlier epoch of its lease (this run holds a later one) were left by
   * a holder that died or lost the account: they become `interrupted`. A run of the current epoch is never touched.
   */
  readonly closeAbandoned: (accountId: string) => Effect.Effect<number, SqlError.SqlError>
  /** The run's process is alive: its heartbeat (every `runHeartbeatEvery` while it runs), with its counts so far. */
  readonly beat: (runId: number, counts: RunCounts) => Effect.Effect<void, SqlError.SqlError>
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
 * Every method is one statement (its lease check inside it), retried when the connection is lost: a repeat of an
 * UPDATE that did commit changes nothing. (An INSERT whose acknowledgement was lost can leave a second `running` row behind; the account's next run
 * closes it as interrupted.)
 */
export const RunsLive = Layer.effect(
  Runs,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insertStatement = (accountId: string, stream: string, kind: string) =>
      Effect.map(Effect.zip(leaseFence(sql, accountId), leaseEpoch(accountId)), ([fence, epoch]) => sql`
          INSERT INTO sync_runs (account_id, stream, kind, lease_epoch, heartbeat_at) SELECT ${accountId}, ${stream}, ${kind}, ${epoch}, now() WHERE ${fence} RETURNING id`)
    const insert = (accountId: string, stream: string, kind: string) =>
      Effect.gen(function* () {
        const rows = yield* yield* insertStatement(accountId, stream, kind)
        const row = rows[0]
        if (row === undefined) return yield* new AccountLockLost({ accountId, stream })
        return (yield* Effect.orDie(Schema.decodeUnknown(IdRow)(row))).id
      })
    const close = (accountId: string) =>
      Effect.gen(function* () {
        const fence = yield* leaseFence(sql, accountId)
        const epoch = yield* leaseEpoch(accountId)
        const rows = yield* sql`
          UPDATE sync_runs SET outcome = 'interrupted', finished_at = now(), error = 'the process running it stopped or lost the account'
          WHERE account_id = ${accountId} AND outcome = 'running' AND (${epoch}::bigint IS NULL OR lease_epoch IS NULL OR lease_epoch < ${epoch})
            AND ${fence}
          RETURNING id`
        return rows.length
      })
    /** The counts and outcome a run's end writes (`rowsWritten`: a fragment, to count in the statement that ends it). */
    const ended = (outcome: RunOutcome, c: RunCounts, rowsWritten: Statement.Fragment, error: string | null) => sql`
      finished_at = now(), outcome = ${outcome}, pages = ${c.pages}, rows = ${c.rows},
      rows_written = ${rowsWritten}, rows_deleted = ${c.rowsDeleted}, cost_points = ${Math.round(c.costPoints)},
      throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled}, overhead_points = ${Math.round(c.overheadPoints)},
      rows_confirmed = ${c.rowsConfirmed}, error = ${error}`
    /** A running run's counts so far (its end writes the rest). */
    const countsSoFar = (c: RunCounts) => sql`
      pages = ${c.pages}, rows = ${c.rows}, rows_written = ${c.rowsWritten},
      cost_points = ${Math.round(c.costPoints)}, throttle_wait_ms = ${Math.round(c.throttleWaitMs)}, throttled = ${c.throttled},
      overhead_points = ${Math.round(c.overheadPoints)}`
    /** The fence of a write to a run's row: the lease the fiber holds (a run's fiber holds its account's). */
    const runFence = Effect.map(FiberRef.get(currentAccountLease), (held) =>
      Option.match(held, {
        onNone: () => sql`true`,
        onSome: (lease) => sql`${leaseHeld(sql, lease)} AND account_id = ${lease.accountId}`
      })
    )
    const finishStep = (runId: number, c: RunCounts): LandingStep => ({
      name: "run_finished",
      sql: () => sql`
        UPDATE sync_runs SET ${ended("succeeded", c, sql`${c.rowsWritten}::int + (SELECT count(*) FROM landed)::int`, null)}
        WHERE id = ${runId} AND outcome = 'running' AND EXISTS (SELECT 1 FROM pass)`
    })
    return Runs.of({
      finishStep,
      ...retryingOnConnectionLoss({
        start: (accountId: string, stream: string, kind: PassKind) => insert(accountId, stream, kind),
        startStatement: insertStatement,
        progress: (runId: number, c: RunCounts) =>
          Effect.flatMap(runFence, (fence) => sql`UPDATE sync_runs SET ${countsSoFar(c)} WHERE id = ${runId} AND ${fence}`).pipe(Effect.asVoid),
        finish: (runId: number, outcome: RunOutcome, c: RunCounts, error?: string) =>
          Effect.flatMap(runFence, (fence) => sql`
            UPDATE sync_runs SET ${ended(outcome, c, sql`${c.rowsWritten}`, error ?? null)} WHERE id = ${runId} AND ${fence}`).pipe(Effect.asVoid),
        skipped: (accountId: string, stream: string, kind: PassKind, reason: string) =>
          Effect.asVoid(sql`
            INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error)
            VALUES (${accountId}, ${stream}, ${kind}, now(), 'skipped', ${reason})`),
        failedBeforeStart: (accountId: string, stream: string, kind: PassKind, error: string) =>
          Effect.flatMap(Effect.zip(leaseFence(sql, accountId), leaseEpoch(accountId)), ([fence, epoch]) => sql`
            INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error, lease_epoch)
            SELECT ${accountId}, ${stream}, ${kind}, now(), 'failed', ${error}, ${epoch} WHERE ${fence}`).pipe(Effect.asVoid),
        closeAbandoned: close,
        beat: (runId: number, c: RunCounts) =>
          Effect.flatMap(runFence, (fence) => sql`
            UPDATE sync_runs SET heartbeat_at = now(), ${countsSoFar(c)} WHERE id = ${runId} AND outcome = 'running' AND ${fence}`).pipe(Effect.asVoid)
      })
    })
  })
)

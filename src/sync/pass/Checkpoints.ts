import { SqlClient, type SqlError, SqlSchema, type Statement } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryingOnConnectionLoss } from "../../db/connectionRetry.js"
import { rowsOrDie } from "../../db/rows.js"
import { leaseFence, stillHeld } from "../AccountLeases.js"
import { AccountLockLost } from "../errors.js"
import { sweepPlannerSettings } from "../landing/sweep.js"
import type { Checkpoint, PassKind } from "../model.js"
import type { AnyStream } from "../streams/Stream.js"
import { checkpointReads, type DataCurrent } from "./checkpointReads.js"
import { CheckpointRow, toCheckpoint } from "./checkpointRows.js"
import { incrementalEnd } from "./checkpointSteps.js"
import { seenIds, unseenStatement } from "./seenIds.js"
import type { Candidate } from "./SweepPlan.js"

const CountRow = Schema.Struct({ n: Schema.Number })
const CandidateRow = Schema.Struct({ id: Schema.String, near: Schema.NullOr(Schema.String) })
const TracksSeenRow = Schema.Struct({ tracks_seen: Schema.Boolean })

/** What a full pass could say about deletions (`status` shows it). */
export interface DeletionsCheck {
  /** Rows the pass kept live without proving them there or gone, and why; null when every candidate was decided. */
  readonly unchecked: string | null
  /** Rows the service counts but did not list (it withholds them), by the pass's complete listing; null when not listed. */
  readonly withheld: number | null
}

export interface BegunPass {
  /** A full pass in progress was picked up where its last committed page left it. */
  readonly resumed: boolean
  readonly checkpoint: Checkpoint
}

/**
 * The pass lifecycle of each account and stream (`sync_checkpoints`, `sync_pass_seen`): begin (or resume), the ids a
 * full pass saw, and finish. Each page moves the checkpoint in the page's own statement, by the steps of
 * checkpointSteps (`checkpointStep`, `seenStep`); with checkpointSteps, checkpointReads and seenIds, the only modules
 * that read or write these tables (`status` joins them).
 */
export class Checkpoints extends Context.Tag("account-sync/Checkpoints")<
  Checkpoints,
  {
    readonly read: (accountId: string, stream: string) => Effect.Effect<Option.Option<Checkpoint>, SqlError.SqlError>
    /** Every checkpoint of one account in one statement, by stream (a run decides each stream's pass from them). */
    readonly forAccount: (accountId: string) => Effect.Effect<ReadonlyMap<string, Checkpoint>, SqlError.SqlError>
    /** `forAccount` with another query's rows, read in the same statement (its columns named apart from a checkpoint's). */
    readonly forAccountWith: (
      accountId: string,
      other: Statement.Fragment
    ) => Effect.Effect<{ readonly checkpoints: ReadonlyMap<string, Checkpoint>; readonly other: ReadonlyArray<Record<string, unknown>> }, SqlError.SqlError>
    /** Every account's checkpoints, by account and stream (the schedule reads when each account is due). */
    readonly all: () => Effect.Effect<ReadonlyMap<string, ReadonlyMap<string, Checkpoint>>, SqlError.SqlError>
    /**
     * Starts a pass, or resumes the full pass in progress (unless `restart`). Starting a full pass forgets the ids a
     * previous unfinished one had seen; it records the ids it sees only when the account has live rows in the
     * stream's table (otherwise every live row at its end is one it landed). Repeated whole after a lost COMMIT
     * acknowledgement, it finds the pass it had started (a full one resumes).
     */
    readonly begin: (
      accountId: string,
      stream: AnyStream,
      kind: PassKind,
      options?: { readonly restart?: boolean }
    ) => Effect.Effect<BegunPass, SqlError.SqlError | AccountLockLost>
    /**
     * `begin` of an incremental pass and the INSERT of its run's row (`run`, Runs.startStatement) in one statement:
     * the checkpoint is begun only where the run's row was written (its lease held). Returns the run's id.
     */
    readonly beginIncremental: (
      accountId: string,
      stream: AnyStream,
      run: Statement.Fragment
    ) => Effect.Effect<{ readonly runId: number; readonly begun: BegunPass }, SqlError.SqlError | AccountLockLost>
    /** How many distinct rows the full pass in progress landed (its seen ids, or the live rows when it records none). */
    readonly seenCount: (accountId: string, stream: AnyStream) => Effect.Effect<number, SqlError.SqlError>
    /** The seen ids start over, recorded from now on: a listing of the connection replaces what the pass saw. */
    readonly restartSeen: (accountId: string, stream: string) => Effect.Effect<void, SqlError.SqlError>
    readonly recordSeen: (accountId: string, stream: string, ids: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
    /**
     * Live rows of the account that the full pass in progress has not seen (the candidates of its sweep), in id
     * order after `after`, up to `limit`, each with its stored value of the stream's `near` column.
     */
    readonly unseen: (accountId: string, stream: AnyStream, after: string, limit: number) => Effect.Effect<ReadonlyArray<Candidate>, SqlError.SqlError>
    /**
     * The end of an incremental pass, inside the transaction of its last batch: the mark moves to the pass's newest
     * (`passMark`), the pass's start is recorded as its last incremental pass.
     */
    readonly finishIncremental: (accountId: string, stream: string, highWaterMark: string | null) => Effect.Effect<void, SqlError.SqlError>
    /**
     * The end of a full pass, inside the caller's transaction (which checks the account's lock first). When the pass
     * is still in progress (a repeat after a lost COMMIT acknowledgement finds it ended, and does nothing), its
     * checkpoint is locked, `sweep` marks deleted the live rows whose id is not among `seen` (the ids it saw, a
     * subquery of `id`, and the rows its end kept) unless the pass recorded none, and the pass
     * finishes: its seen ids forgotten, its start recorded as the last full pass, with what it could say about
     * deletions. Returns what the sweep marked.
     */
    readonly finishFull: <E, R>(
      accountId: string,
      stream: string,
      deletions: DeletionsCheck,
      sweep: (seen: Statement.Fragment) => Effect.Effect<number, E, R>
    ) => Effect.Effect<{ readonly deleted: number }, SqlError.SqlError | E, R>
    /** The stream's next `sync` runs a full pass (a change event named a record it could not read otherwise). */
    readonly requestFullPass: (accountId: string, stream: string) => Effect.Effect<void, SqlError.SqlError>
    /**
     * The stream's data is known current as of `at` (its change events were applied, the records read at `at`): the
     * time only moves forward. A pass's end moves it too (to the pass's start).
     */
    readonly markCurrent: (accountId: string, stream: string, at: Date) => Effect.Effect<void, SqlError.SqlError>
    /** Every account's streams with when their data was last known current (null: no pass finished, no event applied). */
    readonly currentAsOf: () => Effect.Effect<ReadonlyArray<DataCurrent>, SqlError.SqlError>
  }
>() {}

export const CheckpointsLive = Layer.effect(
  Checkpoints,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { readOnce, forAccount, forAccountWith, all, currentAsOf } = checkpointReads(sql)
    const countSeen = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String, table: Schema.String }),
      Result: CountRow,
      execute: ({ accountId, stream, table }) => sql`
        SELECT CASE WHEN c.tracks_seen
          THEN (SELECT count(*) FROM sync_pass_seen s WHERE s.account_id = c.account_id AND s.stream = c.stream)
          ELSE (SELECT count(*) FROM ${sql(table)} t WHERE t.account_id = c.account_id AND t.deleted_at IS NULL) END::int AS n
        FROM sync_checkpoints c WHERE c.account_id = ${accountId} AND c.stream = ${stream}`
    })

    /** The statement that starts a pass of `kind` in the checkpoint where `fence` holds, returning the checkpoint. */
    const startStatement = (accountId: string, stream: AnyStream, kind: PassKind, fence: Statement.Fragment) => {
      const tracksSeen =
        kind === "full" ? sql`EXISTS (SELECT 1 FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL)` : sql`false`
      return sql`
          INSERT INTO sync_checkpoints (account_id, stream, pass_kind, partition, position, anchors, shifted, pass_started_at, tracks_seen, updated_at)
          SELECT ${accountId}, ${stream.name}, ${kind}, 0, 0, NULL, false, now(), ${tracksSeen}, now() WHERE ${fence}
          ON CONFLICT (account_id, stream) DO UPDATE SET
            pass_kind = EXCLUDED.pass_kind, partition = 0, position = 0, anchors = NULL, shifted = false, pass_started_at = now(),
            tracks_seen = EXCLUDED.tracks_seen, updated_at = now()
          RETURNING pass_kind, partition, position, anchors, shifted, tracks_seen, pass_started_at, high_water_mark, last_full_pass_at,
            full_pass_requested_at, last_incremental_pass_at`
    }

    /** The pass of `kind` started in the checkpoint (where `fence` holds): the checkpoint as it is now, or none. */
    const startPass = (accountId: string, stream: AnyStream, kind: PassKind, fence: Statement.Fragment) =>
      Effect.gen(function* () {
        const upserted = yield* startStatement(accountId, stream, kind, fence)
        return upserted.length === 0 ? Option.none() : Option.some(toCheckpoint(yield* rowsOrDie(Schema.decodeUnknown(CheckpointRow)(upserted[0]))))
      })

    const StartedRow = Schema.extend(CheckpointRow, Schema.Struct({ run_id: Schema.Union(Schema.Number, Schema.NumberFromString) }))
    const beginIncremental = (accountId: string, stream: AnyStream, run: Statement.Fragment) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          WITH run AS (${run}), checkpoint AS (${startStatement(accountId, stream, "incremental", sql`EXISTS (SELECT 1 FROM run)`)})
          SELECT run.id AS run_id, checkpoint.* FROM run CROSS JOIN checkpoint`
        if (rows[0] === undefined) return yield* new AccountLockLost({ accountId, stream: stream.name })
        const row = yield* rowsOrDie(Schema.decodeUnknown(StartedRow)(rows[0]))
        return { runId: row.run_id, begun: { resumed: false, checkpoint: toCheckpoint(row) } satisfies BegunPass }
      })

    const begin = (accountId: string, stream: AnyStream, kind: PassKind, options?: { readonly restart?: boolean }) =>
      kind === "incremental"
        ? // nothing to resume or forget: one statement, fenced by the lease
          Effect.flatMap(leaseFence(sql, accountId), (fence) =>
            Effect.flatMap(startPass(accountId, stream, kind, fence), (started) =>
              Option.isSome(started)
                ? Effect.succeed({ resumed: false, checkpoint: started.value })
                : Effect.fail(new AccountLockLost({ accountId, stream: stream.name }))
            )
          )
        : sql.withTransaction(
            Effect.gen(function* () {
              yield* stillHeld(sql, accountId, stream.name)
              const current = yield* readOnce(accountId, stream.name)
              if (!options?.restart && Option.isSome(current) && current.value.passKind === "full") {
                return { resumed: true, checkpoint: current.value }
              }
              yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream.name}`
              const started = yield* startPass(accountId, stream, kind, sql`true`)
              return { resumed: false, checkpoint: Option.getOrThrow(started) }
            })
          )

    const seenCount = (accountId: string, stream: AnyStream) =>
      Effect.map(rowsOrDie(countSeen({ accountId, stream: stream.name, table: stream.table })), (row) => row.n)

    const finishIncremental = (accountId: string, stream: string, highWaterMark: string | null) =>
      Effect.asVoid(sql`UPDATE sync_checkpoints SET ${incrementalEnd(sql, highWaterMark)} WHERE account_id = ${accountId} AND stream = ${stream}`)

    const fullPassInProgress = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String }),
      Result: TracksSeenRow,
      execute: ({ accountId, stream }) => sql`
        SELECT tracks_seen FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream} AND pass_kind = 'full' FOR UPDATE`
    })
    const finishFull = <E, R>(
      accountId: string,
      stream: string,
      deletions: DeletionsCheck,
      sweep: (seen: Statement.Fragment) => Effect.Effect<number, E, R>
    ): Effect.Effect<{ readonly deleted: number }, SqlError.SqlError | E, R> =>
      Effect.gen(function* () {
        const pass = yield* rowsOrDie(fullPassInProgress({ accountId, stream }))
        if (Option.isNone(pass)) return { deleted: 0 }
        const deleted = pass.value.tracks_seen ? yield* sweep(seenIds(sql, accountId, stream)) : 0
        yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`
        yield* sql`
          UPDATE sync_checkpoints SET pass_kind = NULL, position = NULL, anchors = NULL, shifted = false,
            last_full_pass_at = pass_started_at, data_current_at = GREATEST(data_current_at, pass_started_at),
            deletions_unchecked = ${deletions.unchecked}, rows_withheld = ${deletions.withheld}, updated_at = now()
          WHERE account_id = ${accountId} AND stream = ${stream}`
        return { deleted }
      })

    const unseenRows = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        stream: Schema.String,
        table: Schema.String,
        after: Schema.String,
        limit: Schema.Number,
        near: Schema.optional(Schema.String)
      }),
      Result: CandidateRow,
      execute: (request) => unseenStatement(sql, request)
    })
    const unseen = (accountId: string, stream: AnyStream, after: string, limit: number) =>
      sql.withTransaction(
        Effect.zipRight(
          sql.unsafe(sweepPlannerSettings),
          rowsOrDie(unseenRows({ accountId, stream: stream.name, table: stream.table, after, limit, near: stream.near?.column }))
        )
      )


    return Checkpoints.of({
      // each a statement or a transaction of its own: harmless to repeat on a new session
      ...retryingOnConnectionLoss({
        read: (accountId: string, stream: string) => readOnce(accountId, stream),
        forAccount: (accountId: string) => forAccount(accountId),
        forAccountWith: (accountId: string, other: Statement.Fragment) => forAccountWith(accountId, other),
        all,
        begin: (accountId: string, stream: AnyStream, kind: PassKind, options?: { readonly restart?: boolean }) => begin(accountId, stream, kind, options),
        beginIncremental: (accountId: string, stream: AnyStream, run: Statement.Fragment) => beginIncremental(accountId, stream, run),
        seenCount,
        // under a lease, each write checks it (leaseFence) and writes nothing once it moved to another holder
        restartSeen: (accountId: string, stream: string) =>
          Effect.flatMap(leaseFence(sql, accountId), (fence) =>
            sql.withTransaction(
              Effect.zipRight(
                sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream} AND ${fence}`,
                Effect.asVoid(sql`UPDATE sync_checkpoints SET tracks_seen = true WHERE account_id = ${accountId} AND stream = ${stream} AND ${fence}`)
              )
            )
          ),
        recordSeen: (accountId: string, stream: string, ids: ReadonlyArray<string>) =>
          Effect.flatMap(leaseFence(sql, accountId), (fence) => sql`
            INSERT INTO sync_pass_seen (account_id, stream, id)
            SELECT ${accountId}, ${stream}, id FROM unnest(${ids}::text[]) AS id WHERE ${fence}
            ON CONFLICT DO NOTHING`).pipe(Effect.asVoid),
        requestFullPass: (accountId: string, stream: string) =>
          Effect.flatMap(leaseFence(sql, accountId), (fence) => sql`
            INSERT INTO sync_checkpoints (account_id, stream, full_pass_requested_at) SELECT ${accountId}, ${stream}, now() WHERE ${fence}
            ON CONFLICT (account_id, stream) DO UPDATE SET full_pass_requested_at = now(), updated_at = now()`).pipe(Effect.asVoid),
        unseen,
        currentAsOf
      }),
      // inside the transaction that applies the events
      markCurrent: (accountId: string, stream: string, at: Date) =>
        Effect.flatMap(leaseFence(sql, accountId), (fence) => sql`
          INSERT INTO sync_checkpoints (account_id, stream, data_current_at) SELECT ${accountId}, ${stream}, ${at}::timestamptz WHERE ${fence}
          ON CONFLICT (account_id, stream) DO UPDATE SET data_current_at = GREATEST(sync_checkpoints.data_current_at, EXCLUDED.data_current_at)`).pipe(Effect.asVoid),
      // inside the transaction that ends the pass: that transaction is retried whole
      finishIncremental,
      finishFull
    })
  })
)

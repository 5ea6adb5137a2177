import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import type { Checkpoint, PassKind } from "./model.js"
import type { AnyStream } from "./streams/Stream.js"

const CheckpointRow = Schema.Struct({
  pass_kind: Schema.NullOr(Schema.Literal("full", "incremental")),
  partition: Schema.Number,
  position: Schema.NullOr(Schema.Number),
  anchors: Schema.NullOr(Schema.Array(Schema.String)),
  shifted: Schema.Boolean,
  tracks_seen: Schema.Boolean,
  pass_started_at: Schema.NullOr(Schema.DateFromSelf),
  high_water_mark: Schema.NullOr(Schema.DateFromSelf),
  last_full_pass_at: Schema.NullOr(Schema.DateFromSelf),
  full_pass_requested_at: Schema.NullOr(Schema.DateFromSelf),
  last_incremental_pass_at: Schema.NullOr(Schema.DateFromSelf)
})

const toCheckpoint = (r: typeof CheckpointRow.Type): Checkpoint => ({
  passKind: r.pass_kind,
  partition: r.partition,
  position: r.position ?? 0,
  anchors: r.anchors ?? [],
  shifted: r.shifted,
  tracksSeen: r.tracks_seen,
  passStartedAt: r.pass_started_at,
  highWaterMark: r.high_water_mark,
  lastFullPassAt: r.last_full_pass_at,
  fullPassRequestedAt: r.full_pass_requested_at,
  lastIncrementalPassAt: r.last_incremental_pass_at
})

const CountRow = Schema.Struct({ n: Schema.Number })

/** What a full pass could say about deletions (`status` shows it). */
export interface DeletionsCheck {
  /** Why the pass marked nothing deleted (its listing was incomplete); null when it checked deletions. */
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
 * full pass saw, and finish. Each page moves the checkpoint in the page's own statement (landing/steps.ts).
 */
export class Checkpoints extends Context.Tag("account-sync/Checkpoints")<
  Checkpoints,
  {
    readonly read: (accountId: string, stream: string) => Effect.Effect<Option.Option<Checkpoint>, SqlError.SqlError>
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
    ) => Effect.Effect<BegunPass, SqlError.SqlError>
    /** How many distinct rows the full pass in progress landed (its seen ids, or the live rows when it records none). */
    readonly seenCount: (accountId: string, stream: AnyStream) => Effect.Effect<number, SqlError.SqlError>
    /** The seen ids start over, recorded from now on: a listing of the connection replaces what the pass saw. */
    readonly restartSeen: (accountId: string, stream: string) => Effect.Effect<void, SqlError.SqlError>
    readonly recordSeen: (accountId: string, stream: string, ids: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
    /**
     * The end of a pass, inside the transaction that ends it: an incremental pass moves the mark (never past its own
     * start); a full pass forgets its seen ids and records when it started as the last full pass, and what it could
     * say about deletions.
     */
    readonly finish: (
      accountId: string,
      stream: string,
      kind: PassKind,
      highWaterMark: string | null,
      deletions?: DeletionsCheck
    ) => Effect.Effect<void, SqlError.SqlError>
    /** The stream's next `sync` runs a full pass (a change event named a record it could not read otherwise). */
    readonly requestFullPass: (accountId: string, stream: string) => Effect.Effect<void, SqlError.SqlError>
    /**
     * The stream's data is known current as of `at` (its change events were applied, the records read at `at`): the
     * time only moves forward. A pass's end moves it too (`finish`: to the pass's start).
     */
    readonly markCurrent: (accountId: string, stream: string, at: Date) => Effect.Effect<void, SqlError.SqlError>
    /** Every account's streams with when their data was last known current (null: no pass finished, no event applied). */
    readonly currentAsOf: () => Effect.Effect<ReadonlyArray<DataCurrent>, SqlError.SqlError>
  }
>() {}

/** When one stream's data of one account was last known current. */
export interface DataCurrent {
  readonly accountId: string
  readonly stream: string
  readonly at: Date | null
}

const DataCurrentRow = Schema.Struct({ account_id: Schema.String, stream: Schema.String, data_current_at: Schema.NullOr(Schema.DateFromSelf) })

export const CheckpointsLive = Layer.effect(
  Checkpoints,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String }),
      Result: CheckpointRow,
      execute: ({ accountId, stream }) => sql`
        SELECT pass_kind, partition, position, anchors, shifted, tracks_seen, pass_started_at, high_water_mark, last_full_pass_at,
          full_pass_requested_at, last_incremental_pass_at
        FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream}`
    })
    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.extend(CheckpointRow, Schema.Struct({ account_id: Schema.String, stream: Schema.String })),
      execute: () => sql`
        SELECT account_id, stream, pass_kind, partition, position, anchors, shifted, tracks_seen, pass_started_at, high_water_mark,
          last_full_pass_at, full_pass_requested_at, last_incremental_pass_at
        FROM sync_checkpoints`
    })
    const all = () =>
      Effect.map(rowsOrDie(findAll(undefined)), (rows) => {
        const byAccount = new Map<string, Map<string, Checkpoint>>()
        for (const r of rows) {
          const streams = byAccount.get(r.account_id) ?? new Map<string, Checkpoint>()
          streams.set(r.stream, toCheckpoint(r))
          byAccount.set(r.account_id, streams)
        }
        return byAccount as ReadonlyMap<string, ReadonlyMap<string, Checkpoint>>
      })
    const readOnce = (accountId: string, stream: string) => Effect.map(rowsOrDie(find({ accountId, stream })), Option.map(toCheckpoint))
    const countSeen = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String, table: Schema.String }),
      Result: CountRow,
      execute: ({ accountId, stream, table }) => sql`
        SELECT CASE WHEN c.tracks_seen
          THEN (SELECT count(*) FROM sync_pass_seen s WHERE s.account_id = c.account_id AND s.stream = c.stream)
          ELSE (SELECT count(*) FROM ${sql(table)} t WHERE t.account_id = c.account_id AND t.deleted_at IS NULL) END::int AS n
        FROM sync_checkpoints c WHERE c.account_id = ${accountId} AND c.stream = ${stream}`
    })

    const begin = (accountId: string, stream: AnyStream, kind: PassKind, options?: { readonly restart?: boolean }) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const current = yield* readOnce(accountId, stream.name)
          if (kind === "full" && !options?.restart && Option.isSome(current) && current.value.passKind === "full") {
            return { resumed: true, checkpoint: current.value }
          }
          if (kind === "full") yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream.name}`
          const tracksSeen =
            kind === "full" ? sql`EXISTS (SELECT 1 FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL)` : sql`false`
          yield* sql`
            INSERT INTO sync_checkpoints (account_id, stream, pass_kind, partition, position, anchors, shifted, pass_started_at, tracks_seen, updated_at)
            VALUES (${accountId}, ${stream.name}, ${kind}, 0, 0, NULL, false, now(), ${tracksSeen}, now())
            ON CONFLICT (account_id, stream) DO UPDATE SET
              pass_kind = EXCLUDED.pass_kind, partition = 0, position = 0, anchors = NULL, shifted = false, pass_started_at = now(),
              tracks_seen = EXCLUDED.tracks_seen, updated_at = now()`
          const started = yield* readOnce(accountId, stream.name)
          return { resumed: false, checkpoint: Option.getOrThrow(started) }
        })
      )

    const seenCount = (accountId: string, stream: AnyStream) =>
      Effect.map(rowsOrDie(countSeen({ accountId, stream: stream.name, table: stream.table })), (row) => row.n)

    const finish = (accountId: string, stream: string, kind: PassKind, highWaterMark: string | null, deletions?: DeletionsCheck) =>
      kind === "incremental"
        ? Effect.asVoid(sql`
            UPDATE sync_checkpoints SET pass_kind = NULL, position = NULL, anchors = NULL, shifted = false,
              high_water_mark = GREATEST(high_water_mark, LEAST(${highWaterMark}::timestamptz, pass_started_at)),
              last_incremental_pass_at = pass_started_at, data_current_at = GREATEST(data_current_at, pass_started_at), updated_at = now()
            WHERE account_id = ${accountId} AND stream = ${stream}`)
        : Effect.zipRight(
            sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`,
            Effect.asVoid(sql`
              UPDATE sync_checkpoints SET pass_kind = NULL, position = NULL, anchors = NULL, shifted = false,
                last_full_pass_at = pass_started_at, data_current_at = GREATEST(data_current_at, pass_started_at),
                deletions_unchecked = ${deletions?.unchecked ?? null}, rows_withheld = ${deletions?.withheld ?? null}, updated_at = now()
              WHERE account_id = ${accountId} AND stream = ${stream}`)
          )

    const listCurrent = SqlSchema.findAll({
      Request: Schema.Void,
      Result: DataCurrentRow,
      execute: () => sql`SELECT account_id, stream, data_current_at FROM sync_checkpoints ORDER BY account_id, stream`
    })

    return Checkpoints.of({
      // each a statement or a transaction of its own: harmless to repeat on a new session
      ...retryingOnConnectionLoss({
        read: (accountId: string, stream: string) => readOnce(accountId, stream),
        all,
        begin: (accountId: string, stream: AnyStream, kind: PassKind, options?: { readonly restart?: boolean }) => begin(accountId, stream, kind, options),
        seenCount,
        restartSeen: (accountId: string, stream: string) =>
          sql.withTransaction(
            Effect.zipRight(
              sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`,
              Effect.asVoid(sql`UPDATE sync_checkpoints SET tracks_seen = true WHERE account_id = ${accountId} AND stream = ${stream}`)
            )
          ),
        recordSeen: (accountId: string, stream: string, ids: ReadonlyArray<string>) =>
          Effect.asVoid(sql`
            INSERT INTO sync_pass_seen (account_id, stream, id)
            SELECT ${accountId}, ${stream}, id FROM unnest(${ids}::text[]) AS id
            ON CONFLICT DO NOTHING`),
        requestFullPass: (accountId: string, stream: string) =>
          Effect.asVoid(sql`
            INSERT INTO sync_checkpoints (account_id, stream, full_pass_requested_at) VALUES (${accountId}, ${stream}, now())
            ON CONFLICT (account_id, stream) DO UPDATE SET full_pass_requested_at = now(), updated_at = now()`),
        currentAsOf: () =>
          Effect.map(rowsOrDie(listCurrent(undefined)), (rows) => rows.map((r) => ({ accountId: r.account_id, stream: r.stream, at: r.data_current_at })))
      }),
      // inside the transaction that applies the events
      markCurrent: (accountId: string, stream: string, at: Date) =>
        Effect.asVoid(sql`
          INSERT INTO sync_checkpoints (account_id, stream, data_current_at) VALUES (${accountId}, ${stream}, ${at})
          ON CONFLICT (account_id, stream) DO UPDATE SET data_current_at = GREATEST(sync_checkpoints.data_current_at, EXCLUDED.data_current_at)`),
      // inside the transaction that ends the pass: that transaction is retried whole
      finish
    })
  })
)

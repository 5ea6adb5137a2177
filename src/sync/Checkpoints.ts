import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import type { Checkpoint, PassKind } from "./model.js"
import type { AnyStream } from "./streams/Stream.js"

const CheckpointRow = Schema.Struct({
  pass_kind: Schema.NullOr(Schema.Literal("full", "incremental")),
  cursor: Schema.NullOr(Schema.String),
  pass_started_at: Schema.NullOr(Schema.DateFromSelf),
  high_water_mark: Schema.NullOr(Schema.DateFromSelf),
  last_full_pass_at: Schema.NullOr(Schema.DateFromSelf)
})

const toCheckpoint = (r: typeof CheckpointRow.Type): Checkpoint => ({
  passKind: r.pass_kind,
  cursor: r.cursor,
  passStartedAt: r.pass_started_at,
  highWaterMark: r.high_water_mark,
  lastFullPassAt: r.last_full_pass_at
})

export interface BegunPass {
  /** Where to page from (null: the start). */
  readonly cursor: string | null
  /** A full pass in progress was picked up where its last committed page left it. */
  readonly resumed: boolean
  readonly checkpoint: Checkpoint
}

/**
 * The pass lifecycle of each account and stream (`sync_checkpoints`, `sync_pass_seen`): begin (or resume), and
 * finish. Each page moves the checkpoint in the page's own statement (landing/steps.ts); `finish` runs in the
 * transaction of the pass's last page.
 */
export class Checkpoints extends Context.Tag("account-sync/Checkpoints")<
  Checkpoints,
  {
    readonly read: (accountId: string, stream: string) => Effect.Effect<Option.Option<Checkpoint>, SqlError.SqlError>
    /**
     * Starts a pass, or resumes the full pass in progress (unless `restart`). Starting a full pass forgets the ids a
     * previous unfinished one had seen; it records the ids it sees only when the account has live rows in the
     * stream's table (otherwise its end has nothing to sweep). Repeated whole after a lost COMMIT acknowledgement,
     * it finds the pass it had started (a full one resumes).
     */
    readonly begin: (
      accountId: string,
      stream: AnyStream,
      kind: PassKind,
      options?: { readonly restart?: boolean }
    ) => Effect.Effect<BegunPass, SqlError.SqlError>
    /**
     * The end of a pass, inside the transaction of its last page: an incremental pass moves the mark (never past its
     * own start); a full pass forgets its seen ids and records when it started as the last full pass.
     */
    readonly finish: (accountId: string, stream: string, kind: PassKind, highWaterMark: string | null) => Effect.Effect<void, SqlError.SqlError>
  }
>() {}

export const CheckpointsLive = Layer.effect(
  Checkpoints,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String }),
      Result: CheckpointRow,
      execute: ({ accountId, stream }) => sql`
        SELECT pass_kind, cursor, pass_started_at, high_water_mark, last_full_pass_at
        FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream}`
    })
    const readOnce = (accountId: string, stream: string) => Effect.map(rowsOrDie(find({ accountId, stream })), Option.map(toCheckpoint))

    const begin = (accountId: string, stream: AnyStream, kind: PassKind, options?: { readonly restart?: boolean }) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const current = yield* readOnce(accountId, stream.name)
          if (kind === "full" && !options?.restart && Option.isSome(current) && current.value.passKind === "full") {
            return { cursor: current.value.cursor, resumed: true, checkpoint: current.value }
          }
          if (kind === "full") yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream.name}`
          const tracksSeen =
            kind === "full" ? sql`EXISTS (SELECT 1 FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL)` : sql`false`
          yield* sql`
            INSERT INTO sync_checkpoints (account_id, stream, pass_kind, cursor, pass_started_at, tracks_seen, updated_at)
            VALUES (${accountId}, ${stream.name}, ${kind}, NULL, now(), ${tracksSeen}, now())
            ON CONFLICT (account_id, stream) DO UPDATE SET
              pass_kind = EXCLUDED.pass_kind, cursor = NULL, pass_started_at = now(), tracks_seen = EXCLUDED.tracks_seen,
              updated_at = now()`
          const started = yield* readOnce(accountId, stream.name)
          return { cursor: null, resumed: false, checkpoint: Option.getOrThrow(started) }
        })
      )

    const finish = (accountId: string, stream: string, kind: PassKind, highWaterMark: string | null) =>
      kind === "incremental"
        ? Effect.asVoid(sql`
            UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL,
              high_water_mark = GREATEST(high_water_mark, LEAST(${highWaterMark}::timestamptz, pass_started_at)), updated_at = now()
            WHERE account_id = ${accountId} AND stream = ${stream}`)
        : Effect.zipRight(
            sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`,
            Effect.asVoid(sql`
              UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL, last_full_pass_at = pass_started_at, updated_at = now()
              WHERE account_id = ${accountId} AND stream = ${stream}`)
          )

    return Checkpoints.of({
      read: (accountId, stream) => retryOnConnectionLoss(readOnce(accountId, stream)),
      begin: (accountId, stream, kind, options) => retryOnConnectionLoss(begin(accountId, stream, kind, options)),
      // inside the last page's transaction: that transaction is retried whole
      finish
    })
  })
)

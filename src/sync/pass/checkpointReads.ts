import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { rowsOrDie } from "../../db/rows.js"
import type { Checkpoint } from "../model.js"
import { CheckpointRow, toCheckpoint } from "./checkpointRows.js"
import { joinedAlongside } from "../../db/readAlongside.js"

/** When one stream's data of one account was last known current. */
export interface DataCurrent {
  readonly accountId: string
  readonly stream: string
  readonly at: Date | null
}

const AccountRow = Schema.extend(CheckpointRow, Schema.Struct({ stream: Schema.String }))

const DataCurrentRow = Schema.Struct({ account_id: Schema.String, stream: Schema.String, data_current_at: Schema.NullOr(Schema.DateFromSelf) })

/** The reads of `sync_checkpoints` by account and stream: one checkpoint, an account's, every account's; when each stream's data was current. */
export const checkpointReads = (sql: SqlClient.SqlClient) => {
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
  const accountQuery = (accountId: string) => sql`
      SELECT stream, pass_kind, partition, position, anchors, shifted, tracks_seen, pass_started_at, high_water_mark, last_full_pass_at,
        full_pass_requested_at, last_incremental_pass_at
      FROM sync_checkpoints WHERE account_id = ${accountId}`
  const findAccount = SqlSchema.findAll({ Request: Schema.String, Result: AccountRow, execute: accountQuery })
  const byStream = (rows: ReadonlyArray<typeof AccountRow.Type>) => new Map(rows.map((r) => [r.stream, toCheckpoint(r)])) as ReadonlyMap<string, Checkpoint>
  const forAccount = (accountId: string) => Effect.map(rowsOrDie(findAccount(accountId)), byStream)
  const decodeAccountRows = Schema.decodeUnknown(Schema.Array(AccountRow))
  /**
   * `forAccount` and another query in one statement: their rows side by side (FULL JOIN ON false), the other's
   * columns named apart from a checkpoint's; the other query's rows come back as read.
   */
  const forAccountWith = (accountId: string, other: Statement.Fragment) =>
    Effect.flatMap(sql<Record<string, unknown>>`${joinedAlongside(sql, accountQuery(accountId), other)}`, (rows) =>
      Effect.map(Effect.orDie(decodeAccountRows(rows.filter((r) => r.stream !== null))), (mine) => ({
        checkpoints: byStream(mine),
        other: rows.filter((r) => r.stream === null)
      }))
    )
  const readOnce = (accountId: string, stream: string) => Effect.map(rowsOrDie(find({ accountId, stream })), Option.map(toCheckpoint))
  const listCurrent = SqlSchema.findAll({
    Request: Schema.Void,
    Result: DataCurrentRow,
    execute: () => sql`SELECT account_id, stream, data_current_at FROM sync_checkpoints ORDER BY account_id, stream`
  })
  const currentAsOf = () =>
    Effect.map(rowsOrDie(listCurrent(undefined)), (rows) => rows.map((r) => ({ accountId: r.account_id, stream: r.stream, at: r.data_current_at })))
  return { readOnce, forAccount, forAccountWith, all, currentAsOf }
}

import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import type { TokenUnreadable } from "./errors.js"
import type { IssuedTokens } from "./TokenEndpoint.js"
import { TokenStore } from "./TokenStore.js"

import { ConnectionStatus, type StatusOrAbsent } from "./connectionStatus.js"

export { ConnectionStatus, type StatusOrAbsent } from "./connectionStatus.js"

export interface Connection {
  readonly accountId: string
  readonly accountName: string
  readonly status: ConnectionStatus
  readonly statusReason: string | null
  readonly scopes: ReadonlyArray<string>
  /** When the service issued the connection's first tokens (its clock, when the access token says; else ours). */
  readonly connectedAt: Date
  readonly updatedAt: Date
  /** When the stored access token expires; null when no tokens are stored (disconnected). */
  readonly tokenExpiresAt: Date | null
}

const ConnectionRow = Schema.Struct({
  account_id: Schema.String,
  account_name: Schema.String,
  status: ConnectionStatus,
  status_reason: Schema.NullOr(Schema.String),
  scopes: Schema.NullOr(Schema.String),
  connected_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  access_expires_at: Schema.NullOr(Schema.DateFromSelf)
})

const toConnection = (row: typeof ConnectionRow.Type): Connection => ({
  accountId: row.account_id,
  accountName: row.account_name,
  status: row.status,
  statusReason: row.status_reason,
  scopes: row.scopes ? row.scopes.split(" ").filter((s) => s.length > 0) : [],
  connectedAt: row.connected_at,
  updatedAt: row.updated_at,
  tokenExpiresAt: row.access_expires_at
})

const StatusRow = Schema.Struct({ status: ConnectionStatus })
const AccountRow = Schema.Struct({ account_id: Schema.String })


/**
 * The connection state machine (ARCHITECTURE "Connection states"): active -> revoked | disconnected -> active.
 * The only writer of `connections.status`. Its statements join the surrounding transaction when there is one
 * (`@effect/sql` transactions are fiber-scoped), so a refresh can read under a lock and mark revoked atomically.
 */
export class Connections extends Context.Tag("account-sync/Connections")<
  Connections,
  {
    /** Every connection with its status, reason and token expiry, ordered by account id. */
    readonly list: () => Effect.Effect<ReadonlyArray<Connection>, SqlError.SqlError>
    readonly get: (accountId: string) => Effect.Effect<Option.Option<Connection>, SqlError.SqlError>
    /** The connections of `accountIds` (those that exist) in one statement, ordered by account id: a run's accounts. */
    readonly getMany: (accountIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Connection>, SqlError.SqlError>
    readonly status: (accountId: string) => Effect.Effect<StatusOrAbsent, SqlError.SqlError>
    /** The status under a row lock (`FOR NO KEY UPDATE`) until the surrounding transaction ends. */
    readonly statusForUpdate: (accountId: string) => Effect.Effect<StatusOrAbsent, SqlError.SqlError>
    /** The connect flow finished: the connection is active (whatever it was) with these tokens; one transaction. */
    readonly activate: (input: {
      readonly accountId: string
      readonly accountName: string
      readonly scopes: ReadonlyArray<string>
      readonly tokens: IssuedTokens
    }) => Effect.Effect<Connection, SqlError.SqlError | TokenUnreadable>
    readonly rename: (accountId: string, accountName: string) => Effect.Effect<void, SqlError.SqlError>
    /**
     * The service refused the account's tokens: the connection stops until reconnected. Only an active connection
     * becomes revoked (a disconnected one stays disconnected). Tokens are kept (useless, not more secret).
     */
    readonly markRevoked: (accountId: string, reason: string) => Effect.Effect<void, SqlError.SqlError>
    /**
     * A refresh whose session was lost stored its rotated token afterwards, on a new session: a revocation recorded
     * meanwhile because a refresh elsewhere was refused (it sent the refresh token ours had just replaced) is undone.
     * Only `revoked` set by a refused refresh at or after `since` is; inside the caller's transaction.
     */
    readonly restoreAfterLostRefresh: (accountId: string, since: Date) => Effect.Effect<boolean, SqlError.SqlError>
    /**
     * Disconnected (webhook or our disconnect command): tokens deleted. With `occurredAt` (the service's clock, whole
     * seconds), an event older than the connection's latest connect (a late delivery after a reconnect) changes
     * nothing; one of the same second disconnects. Returns whether anything changed.
     */
    readonly markDisconnected: (
      accountId: string,
      reason: string,
      options?: { readonly occurredAt?: Date }
    ) => Effect.Effect<boolean, SqlError.SqlError>
  }
>() {}

/** Connections with their token expiry, filtered by `where`. */
const selectConnections = (sql: SqlClient.SqlClient) => (where: ReturnType<typeof sql.and> | ReturnType<typeof sql.literal>) => sql`
  SELECT c.account_id, c.account_name, c.status, c.status_reason, c.scopes, c.connected_at, c.updated_at, t.access_expires_at
  FROM connections c
  LEFT JOIN oauth_tokens t ON t.account_id = c.account_id
  WHERE ${where}
  ORDER BY c.account_id`

/**
 * Every connection, read with nothing but the database (no token key: the expiry is a plain column): what `status`
 * shows. A row that does not decode is a defect (the schema and the code disagree); a lost connection stays a SqlError.
 */
export const listConnections: Effect.Effect<ReadonlyArray<Connection>, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* rowsOrDie(SqlSchema.findAll({ Request: Schema.Void, Result: ConnectionRow, execute: () => selectConnections(sql)(sql.literal("true")) })(undefined))
  return rows.map(toConnection)
})

export const ConnectionsLive = Layer.effect(
  Connections,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tokens = yield* TokenStore
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const select = selectConnections(sql)
    const findRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConnectionRow,
      execute: (accountId) => select(sql.and([sql`c.account_id = ${accountId}`]))
    })
    const findRows = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: ConnectionRow,
      execute: (accountIds) => select(sql.and([sql`c.account_id = ANY (${accountIds}::text[])`]))
    })
    const findStatus = SqlSchema.findOne({
      Request: Schema.String,
      Result: StatusRow,
      execute: (accountId) => sql`SELECT status FROM connections WHERE account_id = ${accountId}`
    })
    const findStatusForUpdate = SqlSchema.findOne({
      Request: Schema.String,
      Result: StatusRow,
      execute: (accountId) => sql`SELECT status FROM connections WHERE account_id = ${accountId} FOR NO KEY UPDATE`
    })
    const disconnect = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, reason: Schema.String, at: Schema.DateFromSelf, occurredAt: Schema.NullOr(Schema.DateFromSelf) }),
      Result: AccountRow,
      execute: ({ accountId, reason, at, occurredAt }) => sql`
        UPDATE connections SET status = 'disconnected', status_reason = ${reason}, updated_at = ${at}
        WHERE account_id = ${accountId} ${occurredAt ? sql`AND date_trunc('second', connected_at) <= ${occurredAt}` : sql``}
        RETURNING account_id`
    })

    const restore = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, since: Schema.DateFromSelf, at: Schema.DateFromSelf }),
      Result: AccountRow,
      execute: ({ accountId, since, at }) => sql`
        UPDATE connections SET status = 'active', status_reason = NULL, updated_at = ${at}
        WHERE account_id = ${accountId} AND status = 'revoked' AND status_reason LIKE 'refresh refused%' AND updated_at >= ${since}
        RETURNING account_id`
    })

    const statusOf = (found: Option.Option<typeof StatusRow.Type>): StatusOrAbsent =>
      Option.match(found, { onNone: () => "never connected" as const, onSome: (r) => r.status })

    const get = (accountId: string) => Effect.map(rowsOrDie(findRow(accountId)), Option.map(toConnection))

    const plain = {
      list: () => Effect.provideService(listConnections, SqlClient.SqlClient, sql),
      get,
      getMany: (accountIds: ReadonlyArray<string>) =>
        accountIds.length === 0 ? Effect.succeed([]) : Effect.map(rowsOrDie(findRows(accountIds)), (rows) => rows.map(toConnection)),
      status: (accountId: string) => Effect.map(rowsOrDie(findStatus(accountId)), statusOf),
      activate: ({ accountId, accountName, scopes, tokens: issued }: Parameters<Connections["Type"]["activate"]>[0]) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const at = yield* now
            // on the service's clock when its token says (a disconnect event is dated by that clock)
            const connectedAt = issued.issuedAt ?? at
            yield* sql`
              INSERT INTO connections (account_id, account_name, status, status_reason, scopes, connected_at, updated_at)
              VALUES (${accountId}, ${accountName}, 'active', NULL, ${scopes.join(" ")}, ${connectedAt}, ${at})
              ON CONFLICT (account_id) DO UPDATE SET
                account_name = EXCLUDED.account_name, status = 'active', status_reason = NULL, scopes = EXCLUDED.scopes,
                connected_at = EXCLUDED.connected_at, updated_at = EXCLUDED.updated_at`
            yield* tokens.write(accountId, issued, "replace")
            return yield* get(accountId)
          })
        ).pipe(Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`connection ${accountId} vanished`), onSome: Effect.succeed }))),
      rename: (accountId: string, accountName: string) =>
        Effect.flatMap(now, (at) =>
          Effect.asVoid(sql`UPDATE connections SET account_name = ${accountName}, updated_at = ${at} WHERE account_id = ${accountId}`)
        ),
      markRevoked: (accountId: string, reason: string) =>
        Effect.flatMap(now, (at) =>
          Effect.asVoid(sql`
            UPDATE connections SET status = 'revoked', status_reason = ${reason}, updated_at = ${at}
            WHERE account_id = ${accountId} AND status = 'active'`)
        ),
      markDisconnected: (accountId: string, reason: string, options?: { readonly occurredAt?: Date }) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const changed = yield* rowsOrDie(disconnect({ accountId, reason, at: yield* now, occurredAt: options?.occurredAt ?? null }))
            if (changed.length === 0) return false
            yield* tokens.remove(accountId)
            return true
          })
        )
    }
    return Connections.of({
      // each is one statement or one transaction: harmless to repeat on a new session
      ...retryingOnConnectionLoss(plain),
      // inside the caller's transaction: a lost session ends that transaction, a repeat here cannot help
      statusForUpdate: (accountId) => Effect.map(rowsOrDie(findStatusForUpdate(accountId)), statusOf),
      restoreAfterLostRefresh: (accountId, since) =>
        Effect.flatMap(now, (at) => Effect.map(rowsOrDie(restore({ accountId, since, at })), (rows) => rows.length > 0))
    })
  })
)

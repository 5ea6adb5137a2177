import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, type Redacted, Schema } from "effect"
import { ConnectionStatus, type StatusOrAbsent } from "./connectionStatus.js"
import { TokenUnreadable } from "./errors.js"
import { TokenCipher } from "./TokenCipher.js"
import type { IssuedTokens } from "./TokenEndpoint.js"

/** An account's tokens, decrypted. `version` grows on every write. */
export interface StoredTokens {
  readonly accountId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly refreshToken: Option.Option<Redacted.Redacted<string>>
  readonly expiresAt: Date
  readonly version: number
}

const TokenRow = Schema.Struct({
  account_id: Schema.String,
  access_token: Schema.Uint8ArrayFromSelf,
  refresh_token: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  access_expires_at: Schema.DateFromSelf,
  version: Schema.Union(Schema.Number, Schema.NumberFromString)
})
const decodeRows = Schema.decodeUnknown(Schema.Array(TokenRow))
// its columns prefixed: the read is also carried by another statement (statusAndTokenQuery), beside that one's columns
const StatusAndTokenRow = Schema.Struct({
  token_status: Schema.NullOr(ConnectionStatus),
  token_account_id: Schema.NullOr(Schema.String),
  token_access: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  token_refresh: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  token_expires_at: Schema.NullOr(Schema.DateFromSelf),
  token_version: Schema.NullOr(Schema.Union(Schema.Number, Schema.NumberFromString))
})
const decodeStatusAndToken = Schema.decodeUnknown(Schema.Array(StatusAndTokenRow))

type StoreError = SqlError.SqlError | TokenUnreadable

/** The connection's status and its tokens when active (decrypted), as `readWithStatus` returns them. */
export interface StatusAndTokens {
  readonly status: StatusOrAbsent
  readonly tokens: Option.Option<StoredTokens>
}

/** Encrypted tokens in `oauth_tokens`. `readForUpdate` must run inside a transaction. */
export class TokenStore extends Context.Tag("account-sync/TokenStore")<
  TokenStore,
  {
    readonly read: (accountId: string) => Effect.Effect<Option.Option<StoredTokens>, StoreError>
    /** The connection's status, and its tokens when it is active (never decrypted otherwise), read in one statement. */
    readonly readWithStatus: (accountId: string) => Effect.Effect<StatusAndTokens, StoreError>
    /** `readWithStatus`'s query, for another statement to carry (its one row has `token_for` set to the account). */
    readonly statusAndTokenQuery: (accountId: string) => Statement.Fragment
    /** `readWithStatus`'s answer from the rows of a statement that carried `statusAndTokenQuery` (its row picked out). */
    readonly statusAndTokenFrom: (rows: ReadonlyArray<Record<string, unknown>>) => Effect.Effect<StatusAndTokens, TokenUnreadable>
    /** Locks the row until the surrounding transaction ends (cross-process single-flight). */
    readonly readForUpdate: (accountId: string) => Effect.Effect<Option.Option<StoredTokens>, StoreError>
    /**
     * `replace` (a new connection): both tokens as given. `refresh`: the new access token, and the refresh token
     * when one was returned (the old one is kept otherwise). Either way `version` grows.
     */
    readonly write: (accountId: string, tokens: IssuedTokens, mode: "replace" | "refresh") => Effect.Effect<StoredTokens, StoreError>
    readonly remove: (accountId: string) => Effect.Effect<void, SqlError.SqlError>
  }
>() {}

export const TokenStoreLive = Layer.effect(
  TokenStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* TokenCipher

    const decrypt = (row: typeof TokenRow.Type) =>
      Effect.gen(function* () {
        const open = (value: Uint8Array, what: string) =>
          cipher
            .decrypt(value, `${what} of account ${row.account_id}`)
            .pipe(Effect.mapError((e) => new TokenUnreadable({ accountId: row.account_id, what, ...(e.keyId ? { keyId: e.keyId } : {}) })))
        const accessToken = yield* open(row.access_token, "access token")
        const refreshToken = row.refresh_token === null ? Option.none() : Option.some(yield* open(row.refresh_token, "refresh token"))
        return { accountId: row.account_id, accessToken, refreshToken, expiresAt: row.access_expires_at, version: row.version }
      })

    const one = (rows: ReadonlyArray<unknown>) =>
      decodeRows(rows).pipe(
        Effect.orDie,
        Effect.flatMap((decoded) => (decoded.length === 0 ? Effect.succeedNone : Effect.asSome(decrypt(decoded[0]!))))
      )

    const read = (accountId: string) =>
      sql`SELECT account_id, access_token, refresh_token, access_expires_at, version FROM oauth_tokens WHERE account_id = ${accountId}`.pipe(
        Effect.flatMap(one)
      )

    const statusAndTokenQuery = (accountId: string) => sql`
      SELECT k.account_id AS token_for, c.status AS token_status, t.account_id AS token_account_id, t.access_token AS token_access,
        t.refresh_token AS token_refresh, t.access_expires_at AS token_expires_at, t.version AS token_version
      FROM (SELECT ${accountId}::text AS account_id) k
        LEFT JOIN connections c ON c.account_id = k.account_id
        LEFT JOIN oauth_tokens t ON t.account_id = k.account_id AND c.status = 'active'`

    const statusAndTokenFrom = (rows: ReadonlyArray<Record<string, unknown>>) =>
      Effect.flatMap(Effect.orDie(decodeStatusAndToken(rows.filter((r) => r.token_for != null))), (decoded): Effect.Effect<StatusAndTokens, TokenUnreadable> => {
        const row = decoded[0]
        const status: StatusOrAbsent = row?.token_status ?? "never connected"
        if (row === undefined || status !== "active" || row.token_account_id === null || row.token_access === null || row.token_expires_at === null || row.token_version === null) {
          return Effect.succeed({ status, tokens: Option.none<StoredTokens>() })
        }
        const token = {
          account_id: row.token_account_id,
          access_token: row.token_access,
          refresh_token: row.token_refresh,
          access_expires_at: row.token_expires_at,
          version: row.token_version
        }
        return Effect.map(decrypt(token), (tokens) => ({ status, tokens: Option.some(tokens) }))
      })

    const readWithStatus = (accountId: string) => Effect.flatMap(statusAndTokenQuery(accountId), statusAndTokenFrom)

    const readForUpdate = (accountId: string) =>
      sql`SELECT account_id, access_token, refresh_token, access_expires_at, version FROM oauth_tokens WHERE account_id = ${accountId} FOR UPDATE`.pipe(
        Effect.flatMap(one)
      )

    const write = (accountId: string, tokens: IssuedTokens, mode: "replace" | "refresh") =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const access = cipher.encrypt(tokens.accessToken)
        const refresh = Option.match(tokens.refreshToken, { onNone: () => null, onSome: (t) => cipher.encrypt(t) })
        const rows =
          mode === "replace"
            ? yield* sql`
                INSERT INTO oauth_tokens (account_id, access_token, refresh_token, access_expires_at, version, updated_at)
                VALUES (${accountId}, ${access}, ${refresh}, ${tokens.expiresAt}, 1, ${now})
                ON CONFLICT (account_id) DO UPDATE SET
                  access_token = EXCLUDED.access_token, refresh_token = EXCLUDED.refresh_token,
                  access_expires_at = EXCLUDED.access_expires_at, version = oauth_tokens.version + 1, updated_at = EXCLUDED.updated_at
                RETURNING account_id, access_token, refresh_token, access_expires_at, version`
            : yield* sql`
                UPDATE oauth_tokens SET
                  access_token = ${access}, refresh_token = COALESCE(${refresh}, refresh_token),
                  access_expires_at = ${tokens.expiresAt}, version = version + 1, updated_at = ${now}
                WHERE account_id = ${accountId}
                RETURNING account_id, access_token, refresh_token, access_expires_at, version`
        const stored = yield* one(rows)
        return yield* Option.match(stored, {
          onNone: () => Effect.dieMessage(`oauth_tokens row of account ${accountId} vanished during a write`),
          onSome: Effect.succeed
        })
      })

    const remove = (accountId: string) => Effect.asVoid(sql`DELETE FROM oauth_tokens WHERE account_id = ${accountId}`)

    return { read, readWithStatus, statusAndTokenQuery, statusAndTokenFrom, readForUpdate, write, remove }
  })
)

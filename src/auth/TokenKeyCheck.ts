import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { ConfigError, Effect, Option, Schema } from "effect"
import * as crypto from "node:crypto"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import { checkValueOf, type TokenKeyEntry, type TokenKeyRing } from "./TokenKey.js"
import { decryptWith, headerOf } from "./tokenCrypto.js"

const KeyRow = Schema.Struct({ key_id: Schema.String, check_value: Schema.Uint8ArrayFromSelf })
const TokenRow = Schema.Struct({ access_token: Schema.Uint8ArrayFromSelf })
const CountRow = Schema.Struct({ n: Schema.Number })

/** Tokens of a database without a key check (written before it existed) read to tell whether the key fits. */
const probeSize = 20

const refuse = (problem: string) => ConfigError.InvalidData([], `TOKEN_ENCRYPTION_KEY: ${problem}`)

const describeRing = (ring: TokenKeyRing) =>
  `key id ${ring.current.id}${ring.old.length > 0 ? `; TOKEN_ENCRYPTION_OLD_KEYS: ${ring.old.map((k) => k.id).join(", ")}` : ""}`

const proves = (key: TokenKeyEntry, checkValue: Uint8Array) => {
  const expected = checkValueOf(key.secret)
  return checkValue.length === expected.length && crypto.timingSafeEqual(Buffer.from(checkValue), expected)
}

/**
 * The key check, at every start of a process that reads or writes tokens: the database records (in `token_keys`) the
 * id and check value of the key its tokens are written under. This process may go on when
 * - that key is its TOKEN_ENCRYPTION_KEY;
 * - that key is one of its TOKEN_ENCRYPTION_OLD_KEYS: a rotation; the record becomes the current key, and tokens are
 *   re-encrypted under it at their next write;
 * - nothing is recorded yet (first start, or a database from before the check): the current key is recorded, unless
 *   tokens are stored and none of the most recent ones can be decrypted with any configured key.
 * Otherwise it fails with a one-line configuration error (exit 2) naming both key ids, never a key.
 */
export const checkTokenKey = (ring: TokenKeyRing): Effect.Effect<void, ConfigError.ConfigError | SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const recorded = SqlSchema.findOne({ Request: Schema.Void, Result: KeyRow, execute: () => sql`SELECT key_id, check_value FROM token_keys` })
    const recentTokens = SqlSchema.findAll({
      Request: Schema.Void,
      Result: TokenRow,
      execute: () => sql`SELECT access_token FROM oauth_tokens ORDER BY updated_at DESC LIMIT ${probeSize}`
    })

    const fits = (row: typeof KeyRow.Type) => row.key_id === ring.current.id && proves(ring.current, row.check_value)
    // the usual start: the recorded key is ours, nothing to write
    const seen = yield* rowsOrDie(recorded(undefined))
    if (Option.isSome(seen) && fits(seen.value)) return yield* reportOldKeys(ring)

    const settle = sql.withTransaction(
      Effect.gen(function* () {
        // one process at a time records or rotates (replicas starting together)
        yield* sql`LOCK TABLE token_keys IN SHARE ROW EXCLUSIVE MODE`
        const row = yield* rowsOrDie(recorded(undefined))
        if (Option.isSome(row)) {
          if (fits(row.value)) return Option.none<ConfigError.ConfigError>()
          const previous = ring.old.find((k) => k.id === row.value.key_id && proves(k, row.value.check_value))
          if (previous === undefined) {
            return Option.some(
              refuse(
                row.value.key_id === ring.current.id
                  ? `its id ${ring.current.id} is the one recorded in token_keys, but its check value is not: this is not the key the stored tokens are written under`
                  : `the stored tokens are written under key id ${row.value.key_id}, which is not this process's key (${describeRing(ring)}); set TOKEN_ENCRYPTION_KEY to that key, or to rotate, list it in TOKEN_ENCRYPTION_OLD_KEYS`
              )
            )
          }
          yield* sql`UPDATE token_keys SET key_id = ${ring.current.id}, check_value = ${checkValueOf(ring.current.secret)}, updated_at = now()`
          yield* Effect.logWarning(
            `token key rotated: the current key is now ${ring.current.id} (was ${previous.id}); stored tokens are re-encrypted under it at their next write`
          )
          return Option.none()
        }
        const tokens = yield* rowsOrDie(recentTokens(undefined))
        if (tokens.length > 0) {
          const readable = yield* Effect.forEach(tokens, (t) => Effect.option(decryptWith(ring, t.access_token, "stored token")))
          if (!readable.some(Option.isSome)) {
            return Option.some(
              refuse(
                `none of the ${tokens.length} most recently stored tokens can be decrypted with it (${describeRing(ring)}); set TOKEN_ENCRYPTION_KEY to the key they were written with`
              )
            )
          }
        }
        yield* sql`INSERT INTO token_keys (key_id, check_value) VALUES (${ring.current.id}, ${checkValueOf(ring.current.secret)})`
        yield* Effect.logInfo(`recorded the token key check: tokens are written under key id ${ring.current.id}`)
        return Option.none()
      })
    )
    const refused = yield* retryOnConnectionLoss(settle)
    if (Option.isSome(refused)) return yield* Effect.fail(refused.value)
    return yield* reportOldKeys(ring)
  }).pipe(Effect.withSpan("TokenKeyCheck.check"))

/**
 * While old keys are configured: how many active connections still hold a token under another key than the current
 * one (0: TOKEN_ENCRYPTION_OLD_KEYS can be removed).
 */
const reportOldKeys = (ring: TokenKeyRing) =>
  Effect.gen(function* () {
    if (ring.old.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const header = headerOf(ring.current)
    const count = SqlSchema.single({
      Request: Schema.Void,
      Result: CountRow,
      execute: () => sql`
        SELECT count(*)::int AS n FROM oauth_tokens t JOIN connections c ON c.account_id = t.account_id
        WHERE c.status = 'active'
          AND (substring(t.access_token FROM 1 FOR 6) <> ${header}
               OR (t.refresh_token IS NOT NULL AND substring(t.refresh_token FROM 1 FOR 6) <> ${header}))`
    })
    const { n } = yield* rowsOrDie(count(undefined))
    yield* n === 0
      ? Effect.logInfo(`every active connection's tokens are under the current key ${ring.current.id}: TOKEN_ENCRYPTION_OLD_KEYS can be removed`)
      : Effect.logInfo(
          `${n} active connection(s) still hold tokens not written under the current key ${ring.current.id} (old keys: ${ring.old.map((k) => k.id).join(", ")}); each is re-encrypted at its next refresh`
        )
  })

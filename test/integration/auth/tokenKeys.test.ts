import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, ConfigError, Effect, Exit, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { keyIdOfValue } from "../../../src/auth/TokenCipher.js"
import { checkValueOf, keyIdOf } from "../../../src/auth/TokenKey.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { formatConfigError } from "../../../src/config.js"
import type { Env } from "../../support/config.js"
import { authLayerFor, connectAccount, TestEnv } from "../../support/connector.js"
import { TestDatabaseLive } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { registerSecret } from "../../support/secretScan.js"

const newKey = () => {
  const bytes = crypto.randomBytes(32)
  registerSecret(bytes.toString("base64"))
  return { base64: bytes.toString("base64"), secret: Redacted.make(bytes), id: keyIdOf(Redacted.make(bytes)) }
}
type Key = ReturnType<typeof newKey>

/** A value in the format written before key ids: `iv || tag || ciphertext`, no header. */
const legacyEncrypt = (key: Key, plaintext: string) => {
  const iv = crypto.randomBytes(12)
  const cipher = crypto.createCipheriv("aes-256-gcm", Redacted.value(key.secret), iv)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body])
}

/** Runs `effect` in a process of its own (its own layers and pool) configured with these keys. */
const inProcess = <A, E, R>(keys: { readonly current: Key; readonly old?: ReadonlyArray<Key> }, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const env: Env = {
      ...(yield* TestEnv()),
      TOKEN_ENCRYPTION_KEY: keys.current.base64,
      ...(keys.old ? { TOKEN_ENCRYPTION_OLD_KEYS: keys.old.map((k) => k.base64).join(",") } : {})
    }
    return yield* Effect.scoped(Effect.flatMap(Layer.build(authLayerFor(env)), (context) => Effect.provide(effect, context)))
  })

/** The one-line configuration error a process with these keys stops with (exit 2 in the CLI). */
const startupRefusal = (keys: { readonly current: Key; readonly old?: ReadonlyArray<Key> }) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(inProcess(keys, Effect.void))
    if (Exit.isSuccess(exit)) return yield* Effect.dieMessage("the process started")
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure) || !ConfigError.isConfigError(failure.value)) return yield* Effect.dieMessage(`not a configuration error: ${Cause.pretty(exit.cause)}`)
    return formatConfigError(failure.value)
  })

const keyRow = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key_id: string; check_value: Uint8Array }>`SELECT key_id, check_value FROM token_keys`)
const headers = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ access_token: Uint8Array; refresh_token: Uint8Array }>`SELECT access_token, refresh_token FROM oauth_tokens WHERE account_id = ${accountId}`
  ).pipe(Effect.map(([row]) => [keyIdOfValue(row!.access_token), keyIdOfValue(row!.refresh_token)].map(Option.getOrNull)))

const Stack = Layer.mergeAll(EmulatorTest({ rotation: false, accounts: 2 })).pipe(Layer.provideMerge(TestDatabaseLive))

layer(Stack, { timeout: 60_000, excludeTestServices: true })("the token key check and key rotation", (it) => {
  const k1 = newKey()
  const k2 = newKey()
  const k3 = newKey()

  it.effect("first start records the key's id and check value (never the key); another key refuses to start, naming both ids", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      yield* inProcess({ current: k1 }, connectAccount(accounts[0]!.accountId))
      const rows = yield* keyRow
      expect(rows).toHaveLength(1)
      expect(rows[0]!.key_id).toBe(k1.id)
      expect(Buffer.from(rows[0]!.check_value).equals(checkValueOf(k1.secret))).toBe(true)
      expect(Buffer.from(rows[0]!.check_value).includes(Redacted.value(k1.secret))).toBe(false)
      // the same key starts again
      yield* inProcess({ current: k1 }, Effect.void)

      const line = yield* startupRefusal({ current: k2 })
      expect(line).toBe(
        `TOKEN_ENCRYPTION_KEY is invalid (in .env or the environment): the stored tokens are written under key id ${k1.id}, which is not this process's key (key id ${k2.id}); set TOKEN_ENCRYPTION_KEY to that key, or to rotate, list it in TOKEN_ENCRYPTION_OLD_KEYS`
      )
      expect(line).not.toContain(k1.base64)
      expect(line).not.toContain(k2.base64)
      // nothing was changed by the refused start
      expect((yield* keyRow).map((r) => r.key_id)).toEqual([k1.id])
    })
  )

  it.effect("rotation: the new key with the old one listed reads old tokens, re-encrypts them at the next write, and the check moves to the new key", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      expect(yield* headers(accountId)).toEqual([k1.id, k1.id])
      const before = Option.getOrThrow(yield* inProcess({ current: k1 }, Effect.flatMap(TokenStore, (s) => s.read(accountId))))

      const fresh = yield* inProcess(
        { current: k2, old: [k1] },
        Effect.gen(function* () {
          const tokens = yield* AccessTokens
          // the stored token is read under the old key
          const current = yield* tokens.get(accountId)
          expect(Redacted.value(current)).toBe(Redacted.value(before.accessToken))
          expect(yield* headers(accountId)).toEqual([k1.id, k1.id])
          // the next write (a refresh; without rotation the service keeps the refresh token) is under the new key
          return yield* tokens.refreshAfterRejection(accountId, current)
        })
      )
      expect((yield* keyRow).map((r) => r.key_id)).toEqual([k2.id])
      expect(yield* headers(accountId)).toEqual([k2.id, k2.id])
      const after = Option.getOrThrow(yield* inProcess({ current: k2 }, Effect.flatMap(TokenStore, (s) => s.read(accountId))))
      expect(Redacted.value(after.accessToken)).toBe(Redacted.value(fresh))
      expect(Option.map(after.refreshToken, Redacted.value)).toEqual(Option.map(before.refreshToken, Redacted.value))

      // once rotated, a process with only the old key refuses to start
      expect(yield* startupRefusal({ current: k1 })).toContain(`written under key id ${k2.id}, which is not this process's key (key id ${k1.id})`)
    })
  )

  it.effect("values written before key ids are still read, under the current key or an old one", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[1]!.accountId
      yield* inProcess({ current: k2 }, connectAccount(accountId))
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE oauth_tokens SET access_token = ${legacyEncrypt(k2, "legacy-access")}, refresh_token = ${legacyEncrypt(k2, "legacy-refresh")}
                 WHERE account_id = ${accountId}`
      expect(yield* headers(accountId)).toEqual([null, null])
      const read = (keys: { readonly current: Key; readonly old?: ReadonlyArray<Key> }) =>
        inProcess(keys, Effect.flatMap(TokenStore, (s) => s.read(accountId))).pipe(
          Effect.map(Option.getOrThrow),
          Effect.map((t) => [Redacted.value(t.accessToken), Option.getOrNull(Option.map(t.refreshToken, Redacted.value))])
        )
      expect(yield* read({ current: k2 })).toEqual(["legacy-access", "legacy-refresh"])
      expect(yield* read({ current: k3, old: [k2] })).toEqual(["legacy-access", "legacy-refresh"])
    })
  )

  it.effect("a database from before the key check: the key is recorded when it reads the stored tokens, refused when it reads none", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // the state of a database written before the check existed: tokens (both under k2), no record
      yield* sql`DELETE FROM token_keys`
      const line = yield* startupRefusal({ current: k1 })
      expect(line).toMatch(
        new RegExp(`^TOKEN_ENCRYPTION_KEY is invalid \\(in \\.env or the environment\\): none of the 2 most recently stored tokens can be decrypted with it \\(key id ${k1.id}\\)`)
      )
      expect(yield* keyRow).toEqual([])
      yield* inProcess({ current: k2 }, Effect.void)
      expect((yield* keyRow).map((r) => r.key_id)).toEqual([k2.id])
    })
  )

  it.effect("a malformed old key is named, one line", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.gen(function* () {
          const env: Env = { ...(yield* TestEnv()), TOKEN_ENCRYPTION_KEY: k3.base64, TOKEN_ENCRYPTION_OLD_KEYS: `${k2.base64},c2hvcnQ=` }
          return yield* Effect.scoped(Layer.build(authLayerFor(env)))
        })
      )
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      expect(Option.map(failure, (e) => formatConfigError(e as ConfigError.ConfigError))).toEqual(
        Option.some("TOKEN_ENCRYPTION_OLD_KEYS is invalid (in .env or the environment): key 2 is not 32 bytes encoded as base64 (expected such keys separated by commas)")
      )
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Option, Redacted, TestClock, TestContext } from "effect"
import { countingStatements } from "../../../bench/lib/idleCycle.js"
import { AccessTokens, recheckAfterMs } from "../../../src/auth/AccessTokens.js"
import { Connections } from "../../../src/auth/Connections.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { AuthTest, authLayerFor, connectAccount, TestSettings } from "../../support/connector.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { assertNoSecretsIn, makeLogCapture } from "../../support/auth.js"

const logs = makeLogCapture()
const emulatorLayer = EmulatorTest({ rotation: true, accounts: 5 })
const Stack = AuthTest().pipe(
  Layer.provideMerge(emulatorLayer),
  Layer.provideMerge(TestDatabaseEnv),
  Layer.provideMerge(logs.layer)
)

/** Every token value the tests saw, to prove none reached a log line. */
const seen = new Set<string>()
const remember = (token: Redacted.Redacted<string>) => seen.add(Redacted.value(token))
const rememberStored = (accountId: string) =>
  Effect.gen(function* () {
    const stored = yield* (yield* TokenStore).read(accountId)
    if (Option.isSome(stored)) {
      remember(stored.value.accessToken)
      Option.map(stored.value.refreshToken, remember)
    }
    return stored
  })

const refreshes = (accountId: string) =>
  Effect.map(Effect.flatMap(TestEmulator, (e) => e.admin.stats()), (s) => s.refreshesByAccount[accountId] ?? 0)

const account = (i: number) => Effect.map(TestEmulator, (e) => e.accounts[i]!.accountId)

/**
 * Our clock one minute before the stored token's `exp`: inside the refresh skew, not yet expired. The emulator's
 * clock moves to the same instant, so the token a refresh issues is fresh on both clocks (a caller that reads it
 * after the refresh committed must not see it inside the skew and refresh again).
 */
const nearExpiry = (accountId: string) =>
  Effect.gen(function* () {
    const stored = Option.getOrThrow(yield* rememberStored(accountId))
    const target = stored.expiresAt.getTime() - 60_000
    yield* TestClock.setTime(target)
    const emulator = yield* TestEmulator
    const { nowMs } = yield* emulator.admin.clock()
    if (target > nowMs) yield* emulator.admin.advanceClock({ seconds: Math.ceil((target - nowMs) / 1000) })
    return stored
  })

layer(Stack, { excludeTestServices: true })("access tokens: single-flight refresh against the emulator", (it) => {
  it.effect("a fresh token is returned as stored, without a refresh", () =>
    Effect.gen(function* () {
      const accountId = yield* account(0)
      yield* connectAccount(accountId)
      const stored = Option.getOrThrow(yield* rememberStored(accountId))
      const token = yield* (yield* AccessTokens).get(accountId)
      expect(Redacted.value(token)).toBe(Redacted.value(stored.accessToken))
      expect(yield* refreshes(accountId)).toBe(0)
    })
  )

  // concurrent statements and row locks need sessions of their own: on the embedded database every connection is one
  it.effect.skipIf(embeddedTestDatabase())("ten concurrent get on a token inside the skew make exactly one refresh", () =>
    Effect.gen(function* () {
      const accountId = yield* account(0)
      const tokens = yield* AccessTokens
      const before = yield* refreshes(accountId)
      const stale = yield* nearExpiry(accountId)
      const results = yield* Effect.all(Array.from({ length: 10 }, () => tokens.get(accountId)), { concurrency: "unbounded" })
      results.forEach(remember)
      expect(yield* refreshes(accountId)).toBe(before + 1)
      expect(new Set(results.map(Redacted.value)).size).toBe(1)
      expect(Redacted.value(results[0]!)).not.toBe(Redacted.value(stale.accessToken))
      // a caller that arrives after the refresh committed reads the new token and does not refresh again
      expect(Redacted.value(yield* tokens.get(accountId))).toBe(Redacted.value(results[0]!))
      expect(yield* refreshes(accountId)).toBe(before + 1)
      const stored = Option.getOrThrow(yield* rememberStored(accountId))
      expect(Redacted.value(stored.accessToken)).toBe(Redacted.value(results[0]!))
      expect(stored.version).toBe(stale.version + 1)
      // rotation: the stored refresh token is the new one, and the service accepts it
      const emulator = yield* TestEmulator
      expect(Redacted.value(Option.getOrThrow(stored.refreshToken))).not.toBe(Redacted.value(Option.getOrThrow(stale.refreshToken)))
      expect(yield* emulator.admin.isRefreshTokenValid({ clientId: emulator.app.clientId, refreshToken: Redacted.value(Option.getOrThrow(stored.refreshToken)) })).toBe(true)
    }).pipe(Effect.provide(TestContext.TestContext))
  )

  it.scoped.skipIf(embeddedTestDatabase())("two processes (own layers, own pools) refreshing one account with rotation make one refresh", () =>
    Effect.gen(function* () {
      const accountId = yield* account(1)
      yield* connectAccount(accountId)
      const db = yield* TestDatabase
      const emulator = yield* TestEmulator
      // the same settings, its own layers and pool: another process
      const processB = yield* Layer.build(authLayerFor(yield* TestSettings))
      const tokensA = yield* AccessTokens
      const before = yield* refreshes(accountId)
      const stale = yield* nearExpiry(accountId)
      const inA = Array.from({ length: 5 }, () => tokensA.get(accountId))
      const inB = Array.from({ length: 5 }, () => Effect.flatMap(AccessTokens, (t) => t.get(accountId)).pipe(Effect.provide(processB)))
      const results = yield* Effect.all([...inA, ...inB], { concurrency: "unbounded" })
      results.forEach(remember)
      expect(yield* refreshes(accountId)).toBe(before + 1)
      expect(new Set(results.map(Redacted.value)).size).toBe(1)
      const stored = Option.getOrThrow(yield* rememberStored(accountId))
      expect(stored.version).toBe(stale.version + 1)
      expect(yield* emulator.admin.isRefreshTokenValid({ clientId: emulator.app.clientId, refreshToken: Redacted.value(Option.getOrThrow(stored.refreshToken)) })).toBe(true)
      expect(Option.getOrThrow(yield* (yield* Connections).get(accountId)).status).toBe("active")
    }).pipe(Effect.provide(TestContext.TestContext))
  )

  it.effect("after a 401, concurrent callers share one refresh; a caller holding an old token gets the stored one", () =>
    Effect.gen(function* () {
      const accountId = yield* account(2)
      yield* connectAccount(accountId)
      const tokens = yield* AccessTokens
      const rejected = yield* tokens.get(accountId)
      const before = yield* refreshes(accountId)
      const results = yield* Effect.all(Array.from({ length: 4 }, () => tokens.refreshAfterRejection(accountId, rejected)), { concurrency: "unbounded" })
      results.forEach(remember)
      expect(yield* refreshes(accountId)).toBe(before + 1)
      expect(new Set(results.map(Redacted.value)).size).toBe(1)
      // a late caller with the token that was already replaced: no second refresh
      const late = yield* tokens.refreshAfterRejection(accountId, rejected)
      expect(Redacted.value(late)).toBe(Redacted.value(results[0]!))
      expect(yield* refreshes(accountId)).toBe(before + 1)
    })
  )

  it.effect("a token is served from memory for at most recheckAfterMs; a refresh replaces it there at once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const accountId = yield* account(2)
      const tokens = yield* AccessTokens
      const sql = yield* SqlClient.SqlClient
      const first = yield* tokens.get(accountId)
      remember(first)
      yield* sql`UPDATE connections SET status = 'revoked' WHERE account_id = ${accountId}`
      yield* TestClock.adjust(Duration.millis(recheckAfterMs - 1))
      expect(Redacted.value(yield* tokens.get(accountId))).toBe(Redacted.value(first))
      yield* TestClock.adjust(Duration.millis(1))
      const refused = yield* Effect.flip(tokens.get(accountId))
      expect(refused).toMatchObject({ _tag: "NotConnected", accountId, status: "revoked" })
      yield* sql`UPDATE connections SET status = 'active' WHERE account_id = ${accountId}`
      const second = yield* tokens.get(accountId)
      const fresh = yield* tokens.refreshAfterRejection(accountId, second)
      remember(fresh)
      expect(Redacted.value(fresh)).not.toBe(Redacted.value(second))
      expect(Redacted.value(yield* tokens.get(accountId))).toBe(Redacted.value(fresh))
    }).pipe(Effect.provide(TestContext.TestContext))
  )

  it.effect.skipIf(embeddedTestDatabase())("a token read by another statement (readAlongside) is kept anew and served without a statement of its own; a revoked connection's drops the kept copy", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const accountId = yield* account(2)
      const tokens = yield* AccessTokens
      const sql = yield* SqlClient.SqlClient
      const carried = () =>
        Effect.gen(function* () {
          const along = yield* tokens.readAlongside(accountId)
          yield* along.use(yield* sql<Record<string, unknown>>`SELECT * FROM (SELECT 1 AS host) h FULL JOIN (${along.query}) a ON false`)
        })
      const first = yield* tokens.get(accountId)
      // the kept copy lapsed: the carried read is served
      yield* TestClock.adjust(Duration.millis(recheckAfterMs))
      yield* carried()
      const [token, served] = yield* countingStatements(tokens.get(accountId))
      expect(Redacted.value(token)).toBe(Redacted.value(first))
      expect(served.statements).toBe(0)
      // about to lapse: the carried read keeps it for another recheckAfterMs
      yield* TestClock.adjust(Duration.millis(recheckAfterMs - 1))
      yield* carried()
      yield* TestClock.adjust(Duration.millis(recheckAfterMs - 1))
      expect((yield* countingStatements(tokens.get(accountId)))[1].statements).toBe(0)
      // revoked, read while the kept copy is still fresh: the copy goes, and get answers from a read of its own
      yield* sql`UPDATE connections SET status = 'revoked' WHERE account_id = ${accountId}`
      yield* carried()
      const [refused, readAlone] = yield* countingStatements(Effect.flip(tokens.get(accountId)))
      expect(refused).toMatchObject({ _tag: "NotConnected", accountId, status: "revoked" })
      expect(readAlone.statements).toBe(1)
      yield* sql`UPDATE connections SET status = 'active' WHERE account_id = ${accountId}`
    }).pipe(Effect.provide(TestContext.TestContext))
  )

  it.effect("invalid_grant: that connection becomes revoked with a reason, others keep working", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const revokedId = yield* account(3)
      const otherId = yield* account(4)
      yield* connectAccount(revokedId)
      yield* connectAccount(otherId)
      yield* emulator.admin.automaticDisconnect({ clientId: emulator.app.clientId, accountId: revokedId, reason: "churn" })
      const tokens = yield* AccessTokens
      const current = yield* tokens.get(revokedId)
      const refused = yield* Effect.flip(tokens.refreshAfterRejection(revokedId, current))
      expect(refused._tag).toBe("TokenRefused")
      expect(refused.message).toContain(revokedId)
      const connection = Option.getOrThrow(yield* (yield* Connections).get(revokedId))
      expect(connection.status).toBe("revoked")
      expect(connection.statusReason).toMatch(/invalid_grant/)
      // the pipeline for it stops with a typed error; the other account is untouched
      expect((yield* Effect.flip(tokens.get(revokedId)))._tag).toBe("NotConnected")
      const other = yield* tokens.refreshAfterRejection(otherId, yield* tokens.get(otherId))
      remember(other)
      expect(Option.getOrThrow(yield* (yield* Connections).get(otherId)).status).toBe("active")
      expect((yield* (yield* Connections).list()).filter((c) => c.status === "active").map((c) => c.accountId)).not.toContain(revokedId)
    })
  )

  it.effect("transient token endpoint failures are retried (bounded); an unreachable endpoint is a typed error", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const accountId = yield* account(4)
      const tokens = yield* AccessTokens
      // seed 138 draws: 5xx, truncated 200, dropped connection, then clean answers
      yield* emulator.admin.setFaults({ errorRate: 0.3, dropRate: 0.15, truncateRate: 0.15, seed: 138 })
      const before = yield* refreshes(accountId)
      const faultsBefore = (yield* emulator.admin.stats()).faultsInjected
      const fresh = yield* tokens.refreshAfterRejection(accountId, yield* tokens.get(accountId)).pipe(Effect.ensuring(Effect.orDie(emulator.admin.setFaults({}))))
      remember(fresh)
      expect(yield* refreshes(accountId)).toBe(before + 1)
      const faultsAfter = (yield* emulator.admin.stats()).faultsInjected
      const injected = (f: typeof faultsAfter) => f.error + f.drop + f.truncate
      expect(injected(faultsAfter) - injected(faultsBefore)).toBe(3)

      const unreachable = authLayerFor({ ...(yield* TestSettings), SERVICE_BASE_URL: "http://127.0.0.1:9" })
      const failure = yield* Effect.flip(
        Effect.flatMap(AccessTokens, (t) => t.refreshAfterRejection(accountId, fresh)).pipe(Effect.provide(unreachable))
      )
      expect(failure._tag).toBe("TokenEndpointUnavailable")
      expect(Option.getOrThrow(yield* (yield* Connections).get(accountId)).status).toBe("active")
    })
  )

  it.effect("no log line contains a token or the client secret", () =>
    Effect.gen(function* () {
      const settings = yield* OAuthClient
      expect(seen.size).toBeGreaterThan(5)
      expect(logs.lines.length).toBeGreaterThan(0)
      yield* assertNoSecretsIn(logs.lines, [Redacted.value(settings.clientSecret), ...seen])
    })
  )
})

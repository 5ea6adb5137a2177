import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted, Schedule, TestClock, TestContext } from "effect"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { Connections } from "../../../src/auth/Connections.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { disconnectAccounts } from "../../../src/cli/disconnect.js"
import { connectionJson } from "../../../src/cli/status.js"
import { authServer } from "../../../src/serve/Server.js"
import { AuthTest, authLayerFor, connectAccount, freePort, TestSettings } from "../../support/connector.js"
import { TestDatabase, TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { runCli } from "../../support/cli.js"
import { assertNoSecretsIn, makeLogCapture } from "../../support/auth.js"

const logs = makeLogCapture()
const Stack = Layer.unwrapEffect(
  Effect.gen(function* () {
    const port = yield* freePort
    const base = `http://127.0.0.1:${port}`
    const emulator = EmulatorTest({ redirectUri: `${base}/oauth/callback`, webhookUrl: `${base}/webhooks`, accounts: 6 })
    const auth = AuthTest()
    return authServer({ port, host: "127.0.0.1" }).pipe(
      Layer.provideMerge(auth),
      Layer.provideMerge(emulator),
      Layer.provideMerge(TestDatabaseEnv),
      Layer.provideMerge(logs.layer)
    )
  })
)

const ids = Effect.map(TestEmulator, (e) => e.accounts.map((a) => a.accountId))

/** What sync does when the stored token nears `exp`: our clock one minute before it, then `get`. */
const getAtExpiry = (accountId: string) =>
  Effect.gen(function* () {
    const stored = Option.getOrThrow(yield* (yield* TokenStore).read(accountId))
    yield* TestClock.setTime(stored.expiresAt.getTime() - 60_000)
    return yield* Effect.either((yield* AccessTokens).get(accountId))
  }).pipe(Effect.provide(TestContext.TestContext))

/** The rows `status --json` prints, by account id. */
const statusJson = Effect.map(Effect.flatMap(Connections, (c) => c.list()), (all) => new Map(all.map((c) => [c.accountId, connectionJson(c, undefined)])))

layer(Stack, { excludeTestServices: true })("every spec transition that ends tokens, observed through status", (it) => {
  it.effect("connect six accounts", () =>
    Effect.gen(function* () {
      for (const id of yield* ids) yield* connectAccount(id)
      const rows = yield* statusJson
      expect([...rows.values()].map((r) => r.status)).toEqual(Array(6).fill("active"))
    })
  )

  it.effect("marketplace disconnect -> disconnected (APP_DISCONNECT webhook), tokens deleted", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const [a0] = yield* ids
      yield* emulator.admin.marketplaceDisconnect({ clientId: emulator.app.clientId, accountId: a0! })
      const row = yield* statusJson.pipe(
        Effect.map((rows) => rows.get(a0!)!),
        Effect.filterOrFail((r) => r.status === "disconnected"),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(Duration.seconds(5))))
      )
      expect(row.reason).toContain("APP_DISCONNECT")
      expect(row.tokenExpiresAt).toBeNull()
    })
  )

  it.effect("appDisconnect (the disconnect command) -> disconnected, and the service no longer accepts the tokens", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const a1 = (yield* ids)[1]!
      const refresh = Option.getOrThrow(Option.getOrThrow(yield* (yield* TokenStore).read(a1)).refreshToken)
      expect(yield* disconnectAccounts([a1])).toEqual([true])
      const row = (yield* statusJson).get(a1)!
      expect([row.status, row.tokenExpiresAt]).toEqual(["disconnected", null])
      expect(row.reason).toContain("appDisconnect")
      expect(yield* emulator.admin.isRefreshTokenValid({ clientId: emulator.app.clientId, refreshToken: Redacted.value(refresh) })).toBe(false)
    })
  )

  it.effect("automatic disconnect, scope change re-authorization, sandbox session -> revoked at the next refresh", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const [, , a2, a3, a4] = yield* ids
      yield* emulator.admin.automaticDisconnect({ clientId: emulator.app.clientId, accountId: a2!, reason: "downgrade" })
      yield* emulator.admin.reauthorizeAfterScopeChange({ clientId: emulator.app.clientId, accountId: a3!, scopes: ["read_jobs", "read_clients", "write_jobs"] })
      yield* emulator.admin.startSandboxSession({ clientId: emulator.app.clientId, accountId: a4! })
      for (const id of [a2!, a3!, a4!]) {
        const result = yield* getAtExpiry(id)
        expect(result._tag === "Left" && result.left._tag).toBe("TokenRefused")
        const row = (yield* statusJson).get(id)!
        expect(row.status).toBe("revoked")
        expect(row.reason).toMatch(/refresh refused: invalid_grant/)
      }
    })
  )

  it.effect("regenerated secret: the old one is a configuration error that destroys nothing; with the new one -> revoked", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const settings = yield* OAuthClient
      const a5 = (yield* ids)[5]!
      const { clientSecret } = yield* emulator.admin.regenerateSecret({ clientId: emulator.app.clientId })

      const misconfigured = yield* getAtExpiry(a5)
      expect(misconfigured._tag === "Left" && misconfigured.left._tag).toBe("ClientMisconfigured")
      expect(misconfigured._tag === "Left" && misconfigured.left.message).toContain("secret was regenerated")
      expect((yield* statusJson).get(a5)!.status).toBe("active")
      expect(Option.isSome(yield* (yield* TokenStore).read(a5))).toBe(true)

      const corrected = { ...(yield* TestSettings), SERVICE_CLIENT_SECRET: clientSecret }
      const afterFix = yield* getAtExpiry(a5).pipe(Effect.provide(authLayerFor(corrected)))
      expect(afterFix._tag === "Left" && afterFix.left._tag).toBe("TokenRefused")

      // what the operator sees: `status --json` from the CLI with the corrected configuration
      const cli = yield* runCli(["status", "--json"], corrected)
      expect(cli.code).toBe(0)
      const rows = new Map((JSON.parse(cli.stdout) as { connections: Array<{ accountId: string; status: string; reason: string | null }> }).connections.map((r) => [r.accountId, r]))
      const all = yield* ids
      expect(all.map((id) => rows.get(id)?.status)).toEqual(["disconnected", "disconnected", "revoked", "revoked", "revoked", "revoked"])
      yield* assertNoSecretsIn([cli.stdout, cli.stderr], [clientSecret, Redacted.value(settings.clientSecret)])
    })
  )

  it.effect("no log line contains a token or a client secret", () =>
    Effect.gen(function* () {
      const settings = yield* OAuthClient
      expect(logs.lines.length).toBeGreaterThan(0)
      yield* assertNoSecretsIn(logs.lines, [Redacted.value(settings.clientSecret)])
    })
  )
})

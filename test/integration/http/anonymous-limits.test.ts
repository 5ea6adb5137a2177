import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { authServer } from "../../../src/http/Server.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, freePort } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"

class Base extends Context.Tag("test/Base")<Base, string>() {}

// an app that opted out of PKCE; a small budget per address and a small cap on pending flows
const Stack = Layer.unwrapEffect(
  Effect.gen(function* () {
    const port = yield* freePort
    const base = `http://127.0.0.1:${port}`
    return authServer({ port, host: "127.0.0.1" }).pipe(
      Layer.provideMerge(AuthTest({ SERVICE_PKCE: "false", OAUTH_RATE_LIMIT: "6", OAUTH_PENDING_MAX: "3" })),
      Layer.provideMerge(EmulatorTest({ redirectUri: `${base}/oauth/callback`, webhookUrl: `${base}/webhooks`, accounts: 1 })),
      Layer.provideMerge(TestDatabaseEnv),
      Layer.provideMerge(Layer.succeed(Base, base))
    )
  })
)

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, { redirect: "manual", headers })
    return { status: res.status, location: res.headers.get("location"), retryAfter: res.headers.get("retry-after"), body: await res.text() }
  })

layer(Stack, { excludeTestServices: true })("serve: bounded anonymous work", (it) => {
  it.effect("SERVICE_PKCE=false: /oauth/start leaves PKCE out (an app setting), and the flow completes", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const acc = (yield* TestEmulator).accounts[0]!
      const start = yield* get(`${base}/oauth/start`)
      expect(start.status).toBe(302)
      const url = new URL(start.location!)
      expect(url.searchParams.has("code_challenge")).toBe(false)
      expect(url.searchParams.has("state")).toBe(true)
      url.searchParams.set("login_hint", acc.accountId)
      const consent = yield* approveInBrowser(url.toString(), { accountId: acc.accountId })
      expect((yield* get(consent.location!)).status).toBe(200)
      expect(Option.map(yield* (yield* Connections).get(acc.accountId), (c) => c.status)).toEqual(Option.some("active"))
    })
  )

  it.effect("pending flows beyond OAUTH_PENDING_MAX get 503; /oauth/start and /oauth/callback beyond OAUTH_RATE_LIMIT per address get 429", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM oauth_pending`
      // the first test took 2 of this address's 6: 4 left
      const statuses: Array<number> = []
      for (let i = 0; i < 3; i++) statuses.push((yield* get(`${base}/oauth/start`)).status)
      const full = yield* get(`${base}/oauth/start`)
      expect([...statuses, full.status]).toEqual([302, 302, 302, 503])
      expect(full.retryAfter).toBe("60")
      expect(full.body).toContain("Too many connections are being started")
      expect(yield* sql`SELECT 1 FROM oauth_pending`).toHaveLength(3)

      // the address's budget is spent: start and callback are refused before any work (no row, no token request)
      const limited = yield* get(`${base}/oauth/start`)
      expect(limited.status).toBe(429)
      expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60)
      const callback = yield* get(`${base}/oauth/callback?code=anything`)
      expect(callback.status).toBe(429)
      // a client cannot claim another address (HTTP_TRUST_PROXY is off)
      expect((yield* get(`${base}/oauth/start`, { "x-forwarded-for": "203.0.113.9" })).status).toBe(429)
      // probes and webhooks are not rate-limited
      expect((yield* get(`${base}/healthz`)).status).toBe(200)
    })
  )
})

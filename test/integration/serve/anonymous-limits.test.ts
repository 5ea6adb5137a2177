import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import * as http from "node:http"
import { Connections } from "../../../src/auth/Connections.js"
import { authServer } from "../../../src/serve/Server.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, freePort } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"

class Base extends Context.Tag("test/Base")<Base, string>() {}

// an app that opted out of PKCE; a small budget per address, small caps on pending flows (per address and in all)
const Stack = Layer.unwrapEffect(
  Effect.gen(function* () {
    const port = yield* freePort
    const base = `http://127.0.0.1:${port}`
    return authServer({ port, host: "127.0.0.1" }).pipe(
      Layer.provideMerge(AuthTest({ SERVICE_PKCE: "false", OAUTH_RATE_LIMIT: "6", OAUTH_PENDING_PER_ADDRESS: "2", OAUTH_PENDING_MAX: "30" })),
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

/** A GET sent from another loopback address (127.0.0.x), as from another client. */
const getFrom = (localAddress: string, url: string) =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const request = http.get(url, { localAddress }, (response) => {
      let body = ""
      response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
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

  it.effect("many addresses cannot lock a new visitor out: pending flows are capped per address (429), and in all far above (503)", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM oauth_pending`
      // 12 addresses spend their whole budget: each keeps 2 flows pending, the rest is refused for that address only
      for (let host = 10; host < 22; host++) {
        const statuses: Array<number> = []
        for (let i = 0; i < 6; i++) statuses.push((yield* getFrom(`127.0.0.${host}`, `${base}/oauth/start`)).status)
        expect(statuses, `127.0.0.${host}`).toEqual([302, 302, 429, 429, 429, 429])
      }
      expect(yield* sql`SELECT 1 FROM oauth_pending`).toHaveLength(24)
      const spent = yield* getFrom("127.0.0.10", `${base}/oauth/start`)
      expect(spent.body).toContain("Too many connection attempts from your address")
      // a visitor from another address still starts
      expect((yield* getFrom("127.0.0.200", `${base}/oauth/start`)).status).toBe(302)
      // the cap of all (OAUTH_PENDING_MAX, here 30) still holds
      for (let host = 30; host < 33; host++) {
        for (let i = 0; i < 2; i++) expect((yield* getFrom(`127.0.0.${host}`, `${base}/oauth/start`)).status).toBe(host === 32 && i === 1 ? 503 : 302)
      }
      expect(yield* sql`SELECT 1 FROM oauth_pending`).toHaveLength(30)
      yield* sql`DELETE FROM oauth_pending`
    })
  )

  it.effect("/oauth/start and /oauth/callback beyond OAUTH_RATE_LIMIT per address get 429; a full address gets 429 saying so", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM oauth_pending`
      // the first test took 2 of this address's 6: 4 left
      const statuses: Array<number> = []
      for (let i = 0; i < 2; i++) statuses.push((yield* get(`${base}/oauth/start`)).status)
      const full = yield* get(`${base}/oauth/start`)
      expect([...statuses, full.status]).toEqual([302, 302, 429])
      expect(full.retryAfter).toBe("60")
      expect(full.body).toContain("Too many connections were started from your address")
      expect(yield* sql`SELECT 1 FROM oauth_pending`).toHaveLength(2)
      expect((yield* get(`${base}/oauth/start`)).status).toBe(429)

      // the address's budget spent (it refills one request every 10 s of real time, so a slow first test leaves one
      // more: the exact count is addressBuckets.test's, on the TestClock): start and callback are refused before any
      // work (no row, no token request)
      let limited = yield* get(`${base}/oauth/start`)
      for (let more = 0; more < 3 && limited.body.includes("Too many connections were started"); more++) limited = yield* get(`${base}/oauth/start`)
      expect(limited.status).toBe(429)
      expect(limited.body).toContain("Too many connection attempts from your address")
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

  it.effect("an anonymous callback costs the service at most two token requests, however the service fails", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const { admin } = yield* TestEmulator
      yield* admin.resetStats()
      yield* admin.setFaults({ errorRate: 1, seed: 3 })
      const answer = yield* getFrom("127.0.0.120", `${base}/oauth/callback?code=bogus`).pipe(Effect.ensuring(Effect.orDie(admin.setFaults({}))))
      expect(answer.status).toBe(502)
      const stats = yield* admin.stats()
      expect(stats.faultsInjected.error).toBe(2)
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, FiberRef, Layer, Option, Redacted, Schedule } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import { Connections } from "../../../src/auth/Connections.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { authServer } from "../../../src/serve/Server.js"
import { webhookFastPath } from "../../../src/serve/webhookFastPath.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, connectAccount, freePort } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { assertNoSecretsIn, makeLogCapture } from "../../support/auth.js"

class ServeBase extends Context.Tag("test/ServeBase")<ServeBase, string>() {}

const logs = makeLogCapture()
/**
 * serve over the emulator. With the tracer off (as the program runs without an exporter) POST /webhooks is taken from
 * Node's server by the fast path; with it on, by the router's route (each delivery a server span).
 */
const stackWith = (tracing: boolean) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const port = yield* freePort
      const base = `http://127.0.0.1:${port}`
      const emulator = EmulatorTest({ redirectUri: `${base}/oauth/callback`, webhookUrl: `${base}/webhooks`, accounts: 4 })
      const auth = AuthTest()
      return Layer.locally(authServer({ port, host: "127.0.0.1" }), FiberRef.currentTracerEnabled, tracing).pipe(
        Layer.provideMerge(auth),
        Layer.provideMerge(emulator),
        Layer.provideMerge(TestDatabaseEnv),
        Layer.provideMerge(Layer.succeed(ServeBase, base)),
        Layer.provideMerge(logs.layer)
      )
    })
  )
const Stack = stackWith(true)

const get = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, { redirect: "manual", ...init })
    return { status: res.status, location: res.headers.get("location"), body: await res.text() }
  })

/** A POST whose body is sent chunked (no Content-Length), as node's http client sends a stream. */
const postChunked = (url: string, body: string, signature: string) =>
  Effect.async<{ status: number; body: string }, Error>((resume) => {
    const request = http.request(url, { method: "POST", headers: { "content-type": "application/json", "x-service-hmac-sha256": signature } }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body: text })))
    })
    request.on("error", (e) => resume(Effect.fail(e)))
    for (let i = 0; i < body.length; i += 16_384) request.write(body.slice(i, i + 16_384))
    request.end()
  })

const account = (i: number) => Effect.map(TestEmulator, (e) => e.accounts[i]!)
const withHint = (url: string, accountId: string) => {
  const u = new URL(url)
  u.searchParams.set("login_hint", accountId)
  return u.toString()
}
const statusOf = (accountId: string) =>
  Effect.map(Effect.flatMap(Connections, (c) => c.get(accountId)), Option.map((c) => c.status))

/** Like a browser: /oauth/start, consent as `accountId`, then the redirect back to serve. */
const connectThroughServe = (accountId: string, startPath: string) =>
  Effect.gen(function* () {
    const base = yield* ServeBase
    const start = yield* get(`${base}${startPath}`)
    expect(start.status).toBe(302)
    const consent = yield* approveInBrowser(withHint(start.location!, accountId), { accountId })
    expect(consent.location).toMatch(new RegExp(`^${base}/oauth/callback\\?`))
    const landing = yield* get(consent.location!)
    return { authorizeUrl: new URL(start.location!), callbackUrl: consent.location!, landing }
  })

const noStackTrace = (body: string) => {
  expect(body).not.toMatch(/\n\s+at /)
  expect(body).not.toContain("Error:")
}

/** Each refused delivery gets its 4xx and changes nothing; the genuine APP_DISCONNECT then disconnects account 1. */
const webhookRefusals = Effect.gen(function* () {
  const base = yield* ServeBase
  const settings = yield* OAuthClient
  const emulator = yield* TestEmulator
  const acc = yield* account(1)
  const body = JSON.stringify({
    data: { webHookEvent: { topic: "APP_DISCONNECT", appId: emulator.app.appId, accountId: acc.accountId, itemId: acc.accountId, occuredAt: "2031-01-01T00:00:00Z" } }
  })
  const sign = (b: string, key: string) => crypto.createHmac("sha256", key).update(b).digest("base64")
  const post = (b: string, signature?: string) =>
    get(`${base}/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(signature ? { "X-Service-Hmac-SHA256": signature } : {}) },
      body: b
    })
  expect((yield* post(body)).status).toBe(401)
  expect((yield* post(body, sign(body, "wrong-secret"))).status).toBe(401)
  expect((yield* post(body, sign(body + " ", Redacted.value(settings.clientSecret)))).status).toBe(401)
  const malformed = '{"data":{"webHookEvent":null}}'
  expect((yield* post(malformed, sign(malformed, Redacted.value(settings.clientSecret)))).status).toBe(400)
  const huge = "x".repeat(200_000)
  // refused before it is read, with a 413 the sender sees (not a reset it would retry): by Content-Length ...
  const oversized = yield* post(huge, sign(huge, Redacted.value(settings.clientSecret)))
  expect(oversized.status).toBe(413)
  // ... or, chunked, as soon as it passes the limit; the connection stays usable
  const chunked = yield* postChunked(`${base}/webhooks`, huge, sign(huge, Redacted.value(settings.clientSecret)))
  expect(chunked.status).toBe(413)
  expect(chunked.body).toContain("larger than 65536 bytes")
  const signed = (b: string) => sign(b, Redacted.value(settings.clientSecret))
  // a NUL Postgres cannot store: a clear 400, not a 500 the service retries forever
  const withNul = body.replace(`"itemId":"${acc.accountId}"`, `"itemId":"${acc.accountId}\\u0000"`)
  expect(withNul).toContain("\\u0000")
  const nul = yield* post(withNul, signed(withNul))
  expect([nul.status, nul.body]).toEqual([400, expect.stringContaining("itemId contains a NUL character")])
  // signed with our secret but for another app: refused, not recorded
  const foreign = body.replace(emulator.app.appId, "someone-elses-app")
  expect((yield* post(foreign, signed(foreign))).status).toBe(403)
  expect(yield* (yield* SqlClient.SqlClient)`SELECT 1 FROM webhook_events WHERE app_id = 'someone-elses-app'`).toHaveLength(0)
  expect(yield* statusOf(acc.accountId)).toEqual(Option.some("active"))
  // and the genuine one is applied
  const ok = yield* post(body, sign(body, Redacted.value(settings.clientSecret)))
  expect(ok.status).toBe(200)
  expect(yield* statusOf(acc.accountId)).toEqual(Option.some("disconnected"))
})

layer(Stack, { excludeTestServices: true })("serve: /oauth/start, /oauth/callback, /webhooks", (it) => {
  it.effect("health and readiness", () =>
    Effect.gen(function* () {
      const base = yield* ServeBase
      expect((yield* get(`${base}/healthz`)).status).toBe(200)
      expect((yield* get(`${base}/readyz`)).status).toBe(200)
    })
  )

  it.effect("connect with PKCE: start -> consent -> callback stores an active connection; the callback cannot be replayed", () =>
    Effect.gen(function* () {
      const acc = yield* account(0)
      const settings = yield* OAuthClient
      const { authorizeUrl, callbackUrl, landing } = yield* connectThroughServe(acc.accountId, "/oauth/start")
      expect(authorizeUrl.searchParams.get("client_id")).toBe(settings.clientId)
      expect(authorizeUrl.searchParams.get("redirect_uri")).toBe(settings.redirectUri)
      expect(authorizeUrl.searchParams.get("code_challenge_method")).toBe("S256")
      expect(authorizeUrl.searchParams.get("state")?.length).toBeGreaterThanOrEqual(32)
      expect(landing.status).toBe(200)
      expect(landing.body).toContain(`${acc.name} (${acc.accountId}) is connected`)
      const connection = Option.getOrThrow(yield* (yield* Connections).get(acc.accountId))
      expect([connection.status, connection.accountName]).toEqual(["active", acc.name])
      expect(connection.scopes).toContain("read_jobs")
      expect(yield* (yield* SqlClient.SqlClient)`SELECT 1 FROM oauth_pending`).toHaveLength(0)

      const replay = yield* get(callbackUrl)
      expect(replay.status).toBe(400)
      expect(replay.body).toContain("does not belong to a flow started here")
      noStackTrace(replay.body)
    })
  )

  it.effect("a visitor cannot turn PKCE off: /oauth/start?pkce=false still starts a PKCE flow", () =>
    Effect.gen(function* () {
      const acc = yield* account(1)
      const { authorizeUrl, landing } = yield* connectThroughServe(acc.accountId, "/oauth/start?pkce=false")
      expect(authorizeUrl.searchParams.get("code_challenge_method")).toBe("S256")
      expect(authorizeUrl.searchParams.has("code_challenge")).toBe(true)
      expect(authorizeUrl.searchParams.has("state")).toBe(true)
      expect(landing.status).toBe(200)
      expect(yield* statusOf(acc.accountId)).toEqual(Option.some("active"))
    })
  )

  it.effect("connect begun from the marketplace (no state, no PKCE)", () =>
    Effect.gen(function* () {
      const acc = yield* account(2)
      const emulator = yield* TestEmulator
      const settings = yield* OAuthClient
      // what the marketplace's Connect button opens
      const url = new URL(`${emulator.baseUrl}/api/oauth/authorize`)
      url.searchParams.set("response_type", "code")
      url.searchParams.set("client_id", settings.clientId)
      url.searchParams.set("redirect_uri", settings.redirectUri)
      const consent = yield* approveInBrowser(withHint(url.toString(), acc.accountId), { accountId: acc.accountId })
      expect(new URL(consent.location!).searchParams.has("state")).toBe(false)
      const landing = yield* get(consent.location!)
      expect(landing.status).toBe(200)
      expect(yield* statusOf(acc.accountId)).toEqual(Option.some("active"))
    })
  )

  it.effect("forged state, denial, a code without a flow and an empty callback get a clear page and change nothing", () =>
    Effect.gen(function* () {
      const base = yield* ServeBase
      const acc = yield* account(3)
      const before = (yield* (yield* Connections).list()).length
      const forged = yield* get(`${base}/oauth/callback?code=abc&state=forged-state`)
      expect(forged.status).toBe(400)
      noStackTrace(forged.body)
      const denied = yield* get(`${base}/oauth/callback?error=access_denied&error_description=nope&state=whatever`)
      expect(denied.status).toBe(403)
      expect(denied.body).toContain("Access was not granted")
      const empty = yield* get(`${base}/oauth/callback`)
      expect(empty.status).toBe(400)
      noStackTrace(empty.body)
      // a real code, but with a PKCE flow's state swapped out: the code exchange without verifier is refused
      const start = yield* get(`${base}/oauth/start`)
      const consent = yield* approveInBrowser(withHint(start.location!, acc.accountId), { accountId: acc.accountId })
      const stripped = new URL(consent.location!)
      stripped.searchParams.delete("state")
      const refused = yield* get(stripped.toString())
      expect(refused.status).toBe(400)
      expect(refused.body).toContain("refused the authorization code")
      expect((yield* (yield* Connections).list()).length).toBe(before)
      expect(yield* statusOf(acc.accountId)).toEqual(Option.none())
    })
  )

  it.effect("marketplace disconnect: the signed APP_DISCONNECT arrives, tokens are deleted, the connection is disconnected", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const acc = yield* account(0)
      yield* emulator.admin.marketplaceDisconnect({ clientId: emulator.app.clientId, accountId: acc.accountId })
      yield* statusOf(acc.accountId).pipe(
        Effect.filterOrFail((s) => Option.getOrUndefined(s) === "disconnected"),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(Duration.seconds(5))))
      )
      expect(Option.isNone(yield* (yield* TokenStore).read(acc.accountId))).toBe(true)
      // the emulator records the delivery when our 200 reaches it, a moment after our commit
      const delivery = yield* emulator.admin.webhookDeliveries().pipe(
        Effect.map((all) => all.at(-1)),
        Effect.filterOrFail((d) => d?.status === "delivered"),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(Duration.seconds(5))))
      )
      expect(delivery).toMatchObject({ accountId: acc.accountId, status: "delivered", attempts: 1 })

      // the admin reconnects a few seconds later (on the service's clock, which dates both the event and the new token);
      // then the event arrives again as if its first delivery had never been recorded (a retry of a lost attempt), and
      // once more: older than the new connection, it changes nothing (before: within 60 s of it, it disconnected it)
      yield* emulator.admin.advanceClock({ seconds: 5 })
      yield* connectAccount(acc.accountId)
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM webhook_events WHERE account_id = ${acc.accountId}`
      for (let i = 0; i < 2; i++) {
        const again = yield* emulator.admin.redeliverWebhook()
        yield* Effect.flatMap(emulator.admin.webhookDeliveries(), (all) => {
          const d = all.find((x) => x.id === again.id)
          return d?.status === "delivered" ? Effect.void : Effect.fail("pending")
        }).pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(Duration.seconds(5)))))
      }
      expect(yield* statusOf(acc.accountId)).toEqual(Option.some("active"))
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE account_id = ${acc.accountId}`).toHaveLength(1)
    })
  )

  it.effect("POST /webhooks: unsigned, forged and malformed bodies get 401/400 and change nothing", () => webhookRefusals)

  it.effect("no log line contains a token or the client secret", () =>
    Effect.gen(function* () {
      const settings = yield* OAuthClient
      expect(logs.lines.some((l) => l.includes("connected"))).toBe(true)
      expect(logs.lines.some((l) => l.includes("APP_DISCONNECT"))).toBe(true)
      yield* assertNoSecretsIn(logs.lines, [Redacted.value(settings.clientSecret)])
    })
  )
})

layer(stackWith(false), { excludeTestServices: true })("serve with the tracer off: POST /webhooks taken before the router", (it) => {
  it.effect("the fast path is taken only with the tracer off", () =>
    Effect.gen(function* () {
      expect(yield* Effect.locally(webhookFastPath, FiberRef.currentTracerEnabled, false)).toBeTypeOf("function")
      expect(yield* Effect.locally(webhookFastPath, FiberRef.currentTracerEnabled, true)).toBeUndefined()
    })
  )
  it.effect("the same answers: 401, 400, 413 (by length and chunked), 403, then 200 and the disconnect applied", () =>
    Effect.gen(function* () {
      yield* connectAccount((yield* account(1)).accountId)
      yield* webhookRefusals
    })
  )
})

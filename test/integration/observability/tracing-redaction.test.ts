import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base"
import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { authServer } from "../../../src/serve/Server.js"
import { redactParams } from "../../../src/observability/redaction.js"
import { tracingTo } from "../../../src/observability/tracing.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, freePort } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"

class Base extends Context.Tag("test/Base")<Base, string>() {}

const exporter = new InMemorySpanExporter()

const Stack = Layer.unwrapEffect(
  Effect.gen(function* () {
    const port = yield* freePort
    const base = `http://127.0.0.1:${port}`
    return authServer({ port, host: "127.0.0.1" }).pipe(
      // serve's spans go to memory, through the same redaction as the OTLP exporter's
      Layer.provide(tracingTo(exporter, { batch: false })),
      Layer.provideMerge(AuthTest()),
      Layer.provideMerge(EmulatorTest({ redirectUri: `${base}/oauth/callback`, webhookUrl: `${base}/webhooks`, accounts: 1 })),
      Layer.provideMerge(TestDatabaseEnv),
      Layer.provideMerge(Layer.succeed(Base, base))
    )
  })
)

const get = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, { redirect: "manual", ...init })
    return { status: res.status, location: res.headers.get("location"), body: await res.text() }
  })

/** Every string a span carries out: names, attributes, events and their attributes, status messages. */
const exported = () =>
  JSON.stringify(
    exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status }))
  )


layer(Stack, { excludeTestServices: true })("tracing: secrets in HTTP spans are redacted before export", (it) => {
  it.effect("the OAuth code and state and the webhook signature never reach the exporter; the spans are still there", () =>
    Effect.gen(function* () {
      const base = yield* Base
      const acc = (yield* TestEmulator).accounts[0]!
      const settings = yield* OAuthClient
      exporter.reset()

      const start = yield* get(`${base}/oauth/start`)
      const authorize = new URL(start.location!)
      const state = authorize.searchParams.get("state")!
      authorize.searchParams.set("login_hint", acc.accountId)
      const consent = yield* approveInBrowser(authorize.toString(), { accountId: acc.accountId })
      const code = new URL(consent.location!).searchParams.get("code")!
      expect((yield* get(consent.location!)).status).toBe(200)

      const body = JSON.stringify({
        data: { webHookEvent: { topic: "JOB_UPDATE", appId: settings.clientId, accountId: acc.accountId, itemId: "x", occuredAt: "2030-01-01T00:00:00Z" } }
      })
      const signature = crypto.createHmac("sha256", Redacted.value(settings.clientSecret)).update(body).digest("base64")
      expect((yield* get(`${base}/webhooks`, { method: "POST", headers: { "x-service-hmac-sha256": signature }, body })).status).toBe(200)

      const text = exported()
      // the requests were traced: server spans for each route, client spans for the token endpoint and the API
      const spans = exporter.getFinishedSpans()
      const callback = spans.find((s) => s.attributes["url.path"] === "/oauth/callback")!
      expect(callback.attributes["url.query"]).toBe("code=REDACTED&state=REDACTED")
      expect(String(callback.attributes["url.full"])).toContain("code=REDACTED&state=REDACTED")
      const startSpan = spans.find((s) => s.attributes["url.path"] === "/oauth/start")!
      expect(String(startSpan.attributes["http.response.header.location"])).toContain("state=REDACTED")
      const webhook = spans.find((s) => s.attributes["url.path"] === "/webhooks")!
      expect(webhook.attributes["http.request.header.x-service-hmac-sha256"]).toBe("REDACTED")
      expect(spans.some((s) => s.kind === 2 /* client */)).toBe(true)

      for (const secret of [code, state, encodeURIComponent(state), signature, Redacted.value(settings.clientSecret)]) {
        expect(text).not.toContain(secret)
      }
    })
  )
})

layer(Layer.empty)("redactParams", (it) => {
  it.effect("only the sensitive parameters' values go; the rest of the URL stays", () =>
    Effect.sync(() => {
      expect(redactParams("https://h/cb?code=abc&state=x%2Fy&error=denied#frag")).toBe("https://h/cb?code=REDACTED&state=REDACTED&error=denied#frag")
      expect(redactParams("code=abc&codec=keep&access_token=t")).toBe("code=REDACTED&codec=keep&access_token=REDACTED")
      expect(redactParams("/jobs?first=10")).toBe("/jobs?first=10")
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import { authServer } from "../../../src/serve/Server.js"
import { AuthTest, freePort } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest } from "../../support/emulator.js"

class Ports extends Context.Tag("test/Ports")<Ports, { readonly port: number; readonly metricsPort: number }>() {}

const Stack = Layer.unwrapEffect(
  Effect.gen(function* () {
    const port = yield* freePort
    const metricsPort = yield* freePort
    const base = `http://127.0.0.1:${port}`
    return authServer({ port, host: "127.0.0.1", metricsPort }).pipe(
      Layer.provideMerge(AuthTest()),
      Layer.provideMerge(EmulatorTest({ redirectUri: `${base}/oauth/callback`, webhookUrl: `${base}/webhooks` })),
      Layer.provideMerge(TestDatabaseEnv),
      Layer.provideMerge(Layer.succeed(Ports, { port, metricsPort }))
    )
  })
)

const get = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, { redirect: "manual" })
    return { status: res.status, headers: res.headers, body: await res.text() }
  })

layer(Stack, { excludeTestServices: true })("serve: METRICS_PORT and the pages' security headers", (it) => {
  it.effect("with METRICS_PORT, /metrics and /readyz answer there and not on the public port; /healthz on both", () =>
    Effect.gen(function* () {
      const { port, metricsPort } = yield* Ports
      const pub = `http://127.0.0.1:${port}`
      const priv = `http://127.0.0.1:${metricsPort}`
      expect((yield* get(`${priv}/metrics`)).status).toBe(200)
      expect((yield* get(`${priv}/readyz`)).status).toBe(200)
      expect((yield* get(`${priv}/healthz`)).status).toBe(200)
      expect((yield* get(`${pub}/metrics`)).status).toBe(404)
      expect((yield* get(`${pub}/readyz`)).status).toBe(404)
      expect((yield* get(`${pub}/healthz`)).status).toBe(200)
      // and the public routes are not on the private port
      expect((yield* get(`${priv}/oauth/start`)).status).toBe(404)
      expect((yield* get(`${pub}/oauth/start`)).status).toBe(302)
    })
  )

  it.effect("an HTML page sends CSP (its one inline style allowed by hash), nosniff, no-referrer and X-Frame-Options DENY", () =>
    Effect.gen(function* () {
      const { port } = yield* Ports
      const page = yield* get(`http://127.0.0.1:${port}/oauth/callback?code=x&state=forged`)
      expect(page.status).toBe(400)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.headers.get("x-content-type-options")).toBe("nosniff")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(page.headers.get("x-frame-options")).toBe("DENY")
      const csp = page.headers.get("content-security-policy") ?? ""
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("frame-ancestors 'none'")
      const style = /<style>(.*?)<\/style>/s.exec(page.body)![1]!
      expect(csp).toContain(`style-src 'sha256-${crypto.createHash("sha256").update(style).digest("base64")}'`)
    })
  )
})

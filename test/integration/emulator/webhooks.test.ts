import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { makeTestEmulator } from "../../support/emulator.js"
import { connect, listen, waitFor, waitUntil } from "../../support/emulatorClient.js"

const verify = (body: string, signature: string | undefined, secret: string) =>
  signature !== undefined &&
  crypto.timingSafeEqual(Buffer.from(signature, "base64"), crypto.createHmac("sha256", secret).update(body).digest())

describe("APP_DISCONNECT webhook", () => {
  it.scopedLive("the body has the WebHookPayload shape and X-Service-Hmac-SHA256 verifies with the client secret", () =>
    Effect.gen(function* () {
      const got: Array<{ body: string; signature: string | undefined }> = []
      const url = yield* listen((body, headers) => {
        got.push({ body, signature: headers["x-service-hmac-sha256"] as string | undefined })
      })
      const emu = yield* makeTestEmulator({ webhookUrl: url })
      const accountId = emu.accounts[0]!.accountId
      yield* connect(emu)
      const before = yield* emu.admin.clock()
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId })
      const after = yield* emu.admin.clock()
      yield* waitFor(() => got.length === 1)
      const event = JSON.parse(got[0]!.body)
      // the service's clock at the disconnect, to the second (it ran on between the two readings)
      const occuredAt: string = event.data.webHookEvent.occuredAt
      expect(occuredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      expect(Date.parse(occuredAt)).toBeGreaterThanOrEqual(Math.floor(before.nowMs / 1000) * 1000)
      expect(Date.parse(occuredAt)).toBeLessThanOrEqual(Math.floor(after.nowMs / 1000) * 1000)
      expect(event).toEqual({
        data: {
          webHookEvent: {
            topic: "APP_DISCONNECT",
            appId: emu.app.appId,
            accountId,
            itemId: accountId,
            occuredAt
          }
        }
      })
      expect(verify(got[0]!.body, got[0]!.signature, emu.app.clientSecret)).toBe(true)
      expect(verify(got[0]!.body, got[0]!.signature, "another-secret")).toBe(false)
      yield* waitUntil(Effect.map(emu.admin.webhookDeliveries(), ([x]) => x?.status === "delivered"))
      const deliveries = yield* emu.admin.webhookDeliveries()
      expect(deliveries).toMatchObject([{ topic: "APP_DISCONNECT", status: "delivered", attempts: 1, lastStatus: 200 }])
    })
  )

  it.scopedLive("a failing receiver gets bounded retries with backoff until it answers 2xx", () =>
    Effect.gen(function* () {
      const times: Array<number> = []
      const url = yield* listen(() => {
        times.push(Date.now())
        return times.length < 3 ? 503 : 204
      })
      const emu = yield* makeTestEmulator({ webhookUrl: url, webhookRetry: { attempts: 5, baseDelayMs: 50 } })
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId })
      yield* waitUntil(Effect.map(emu.admin.webhookDeliveries(), ([d]) => d?.status === "delivered"))
      expect(times).toHaveLength(3)
      const [d] = yield* emu.admin.webhookDeliveries()
      expect(d).toMatchObject({ status: "delivered", attempts: 3, lastStatus: 204 })
      // backoff: each wait at least the jittered base (>= 0.8 * 50 ms), the second longer than the first's minimum
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(35)
      expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(70)
    })
  )

  it.scopedLive("an unreachable or always-failing receiver stops after the attempt bound and the delivery is marked failed", () =>
    Effect.gen(function* () {
      let calls = 0
      const url = yield* listen(() => {
        calls++
        return 500
      })
      const emu = yield* makeTestEmulator({ webhookUrl: url, webhookRetry: { attempts: 3, baseDelayMs: 20 } })
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId })
      yield* waitFor(() => calls === 3)
      yield* Effect.sleep("300 millis")
      expect(calls).toBe(3)
      const [d] = yield* emu.admin.webhookDeliveries()
      expect(d).toMatchObject({ status: "failed", attempts: 3, lastStatus: 500, lastError: "receiver answered HTTP 500" })

      const other = yield* makeTestEmulator({ webhookUrl: "http://127.0.0.1:9/unreachable", webhookRetry: { attempts: 2, baseDelayMs: 20 } })
      yield* other.admin.marketplaceDisconnect({ clientId: other.app.clientId, accountId: other.accounts[0]!.accountId })
      yield* waitUntil(Effect.map(other.admin.webhookDeliveries(), ([x]) => x?.status === "failed"))
      expect((yield* other.admin.webhookDeliveries())[0]).toMatchObject({ status: "failed", attempts: 2 })
    })
  )

  it.scopedLive("redeliverWebhook sends the same event again byte for byte, so receivers can prove idempotency", () =>
    Effect.gen(function* () {
      const bodies: Array<string> = []
      const url = yield* listen((body) => {
        bodies.push(body)
      })
      const emu = yield* makeTestEmulator({ webhookUrl: url })
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId })
      yield* waitFor(() => bodies.length === 1)
      const again = yield* emu.admin.redeliverWebhook()
      yield* waitFor(() => bodies.length === 2)
      expect(bodies[1]).toBe(bodies[0])
      expect(again.redeliveryOf).toBe("wh_1")
    })
  )
})

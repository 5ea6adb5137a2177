import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Emulator } from "../../../src/emulator/Emulator.js"
import { EmulatorAdminClient } from "../../../src/emulator/EmulatorAdminClient.js"
import * as nodeHttp from "node:http"
import { http } from "../../support/emulatorClient.js"

/** A raw POST to the admin API with the headers a web page (or a rebound host name) would send. */
const rawPost = (baseUrl: string, headers: Record<string, string>, body: string) =>
  Effect.async<{ status: number; text: string }>((resume) => {
    const request = nodeHttp.request(`${baseUrl}/__admin`, { method: "POST", headers }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, text })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(body)
  })

describe("admin API over HTTP (EmulatorAdminClient)", () => {
  it.scopedLive("the client drives every kind of operation through POST /__admin", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ admin: true })
      const admin = yield* EmulatorAdminClient.make(emulator.baseUrl)
      const app = yield* admin.createApp({ clientId: "cid", clientSecret: "csecret", redirectUri: "http://127.0.0.1:9/cb", rotation: true })
      expect(app.clientId).toBe("cid")
      const account = yield* admin.createAccount({ name: "Café Lumière", jobs: 12, seed: 3 })
      expect(account.name).toBe("Café Lumière")
      expect((yield* admin.createRecords({ accountId: account.accountId, collection: "jobs", count: 8 })).ids).toHaveLength(8)
      const { ids: deleted } = yield* admin.deleteRecords({ accountId: account.accountId, collection: "jobs", count: 2 })
      const { ids: edited } = yield* admin.editRecords({ accountId: account.accountId, collection: "jobs", ids: [(yield* admin.listRecords({ accountId: account.accountId, collection: "jobs" }))[0]!.id] })
      const jobs = yield* admin.listRecords({ accountId: account.accountId, collection: "jobs" })
      expect(jobs).toHaveLength(18)
      expect(jobs.map((j) => j.id)).not.toContain(deleted[0])
      expect(jobs[0]!.title).toContain("revised")
      expect(edited).toEqual([jobs[0]!.id])
      // the same state is visible in process
      expect(yield* emulator.admin.listRecords({ accountId: account.accountId, collection: "jobs" })).toEqual(jobs)
      yield* admin.setApproval({ mode: "auto", accountId: account.accountId })
      yield* admin.setLimits({ maxPoints: 500 })
      yield* admin.setFaults({ errorRate: 0 })
      const before = yield* admin.clock()
      yield* admin.advanceClock({ seconds: 90 })
      expect((yield* admin.clock()).offsetSeconds).toBe(before.offsetSeconds + 90)
      expect(yield* admin.isRefreshTokenValid({ clientId: "cid", refreshToken: "nope" })).toBe(false)
      const sandbox = yield* admin.startSandboxSession({ clientId: "cid", accountId: account.accountId })
      expect(sandbox.accessToken.split(".")).toHaveLength(3)
      const { clientSecret } = yield* admin.regenerateSecret({ clientId: "cid" })
      expect(clientSecret).not.toBe("csecret")
      yield* admin.updateApp({ clientId: "cid", webhookUrl: "http://127.0.0.1:9/hook" })
      yield* admin.marketplaceDisconnect({ clientId: "cid", accountId: account.accountId })
      expect((yield* admin.webhookDeliveries())[0]).toMatchObject({ topic: "APP_DISCONNECT", accountId: account.accountId })
      expect((yield* admin.stats()).graphqlRequests).toBe(0)
      yield* admin.setWebhookOptions({ duplicateRate: 0.5, accountIdEncoding: "numeric" })
      expect(yield* admin.webhookSubscriptions({ clientId: "cid" })).toEqual([])
      yield* admin.resetStats()
    })
  )

  it.scopedLive("errors name the operation and what was wrong; bodies are decoded with the operation's schema", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ admin: true })
      const admin = yield* EmulatorAdminClient.make(emulator.baseUrl)
      const missing = yield* Effect.flip(admin.createRecords({ accountId: "no-such-account", collection: "jobs", count: 5 }))
      expect(missing).toMatchObject({ _tag: "EmulatorAdminError", operation: "createRecords", reason: "createRecords: no account no-such-account" })
      // on the wire, arguments the operation's Schema refuses never reach it, and the answer names what was wrong
      const post = (body: string) => http(`${emulator.baseUrl}/__admin`, { method: "POST", headers: { "content-type": "application/json" }, body })
      const bad = yield* post(JSON.stringify({ _tag: "Request", id: "1", tag: "advanceClock", payload: { seconds: "ten" }, headers: [] }))
      expect(bad.text).toContain("seconds")
      expect(bad.text).toContain("Expected number, actual")
      expect((yield* admin.clock()).offsetSeconds).toBe(0)
      const unknown = yield* post(JSON.stringify({ _tag: "Request", id: "2", tag: "dropDatabase", payload: {}, headers: [] }))
      expect(unknown.text).toContain("Unknown request tag: dropDatabase")
      const notRpc = yield* http(`${emulator.baseUrl}/__admin`, { method: "GET" })
      expect(notRpc.status).toBe(405)
    })
  )

  it.scopedLive("a web page cannot drive it: cross-origin, text/plain and a rebound Host are refused before any operation runs", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ admin: true })
      const host = new URL(emulator.baseUrl).host
      const setFaults = JSON.stringify({ _tag: "Request", id: "9", tag: "setFaults", payload: { errorRate: 1 }, headers: [] })
      // the review's request: a page on another origin posting text/plain to a rebound host name
      const csrf = yield* rawPost(emulator.baseUrl, { host: `rebind.attacker.example:${new URL(emulator.baseUrl).port}`, origin: "http://attacker.example", "content-type": "text/plain;charset=UTF-8" }, setFaults)
      expect(csrf.status).toBe(403)
      const crossOrigin = yield* rawPost(emulator.baseUrl, { host, origin: "http://attacker.example", "content-type": "application/json" }, setFaults)
      expect([crossOrigin.status, JSON.parse(crossOrigin.text).error]).toEqual([403, "forbidden_origin"])
      const plain = yield* rawPost(emulator.baseUrl, { host, "content-type": "text/plain;charset=UTF-8" }, setFaults)
      expect([plain.status, JSON.parse(plain.text).error]).toEqual([415, "unsupported_media_type"])
      const rebound = yield* rawPost(emulator.baseUrl, { host: "rebind.attacker.example", "content-type": "application/json" }, setFaults)
      expect([rebound.status, JSON.parse(rebound.text).error]).toEqual([403, "forbidden_host"])
      // nothing ran: no fault is on, the service answers
      expect((yield* http(`${emulator.baseUrl}/api/graphql`, { method: "POST", body: "{}" })).status).not.toBe(503)
      // a local program (JSON, its own host, no Origin) still drives it
      const local = yield* rawPost(emulator.baseUrl, { host: `localhost:${new URL(emulator.baseUrl).port}`, "content-type": "application/json" }, JSON.stringify({ _tag: "Request", id: "10", tag: "stats", payload: {}, headers: [] }))
      expect(local.status).toBe(200)
    })
  )

  it.scopedLive("without admin enabled /__admin is not served", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({})
      const error = yield* Effect.flip((yield* EmulatorAdminClient.make(emulator.baseUrl)).stats())
      expect(error).toMatchObject({ _tag: "EmulatorAdminError", operation: "stats" })
      expect(error.reason).toContain("--admin")
      const unknown = yield* http(`${emulator.baseUrl}/__admin`, { method: "POST", body: "{}" })
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ error: "not_found", error_description: "POST /__admin is not served" })
    })
  )
})

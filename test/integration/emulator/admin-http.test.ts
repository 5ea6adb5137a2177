import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Emulator } from "../../../src/emulator/Emulator.js"
import { EmulatorAdminClient } from "../../../src/emulator/EmulatorAdminClient.js"
import { http } from "../../support/emulatorClient.js"

describe("admin API over HTTP (EmulatorAdminClient)", () => {
  it.scopedLive("the client drives every kind of operation through POST /__admin/<operation>", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ admin: true })
      const admin = EmulatorAdminClient.make(emulator.baseUrl)
      const app = yield* admin.createApp({ clientId: "cid", clientSecret: "csecret", redirectUri: "http://127.0.0.1:9/cb", rotation: true })
      expect(app.clientId).toBe("cid")
      const account = yield* admin.createAccount({ name: "Café Lumière", jobs: 12, seed: 3 })
      expect(account.name).toBe("Café Lumière")
      expect((yield* admin.seedJobs(account.accountId, 8)).total).toBe(20)
      const { ids: deleted } = yield* admin.deleteJobs(account.accountId, { count: 2 })
      const { ids: edited } = yield* admin.editJobs(account.accountId, { ids: [(yield* admin.listJobs(account.accountId))[0]!.id] })
      const jobs = yield* admin.listJobs(account.accountId)
      expect(jobs).toHaveLength(18)
      expect(jobs.map((j) => j.id)).not.toContain(deleted[0])
      expect(jobs[0]!.title).toContain("revised")
      expect(edited).toEqual([jobs[0]!.id])
      // the same state is visible in process
      expect(yield* emulator.admin.listJobs(account.accountId)).toEqual(jobs)
      yield* admin.setApproval({ mode: "auto", accountId: account.accountId })
      yield* admin.setLimits({ maxPoints: 500 })
      yield* admin.setFaults({ errorRate: 0 })
      const before = yield* admin.clock()
      yield* admin.advanceClock(90)
      expect((yield* admin.clock()).offsetSeconds).toBe(before.offsetSeconds + 90)
      expect(yield* admin.isRefreshTokenValid("cid", "nope")).toBe(false)
      const sandbox = yield* admin.startSandboxSession("cid", account.accountId)
      expect(sandbox.accessToken.split(".")).toHaveLength(3)
      const { clientSecret } = yield* admin.regenerateSecret("cid")
      expect(clientSecret).not.toBe("csecret")
      yield* admin.updateApp("cid", { webhookUrl: "http://127.0.0.1:9/hook" })
      yield* admin.marketplaceDisconnect("cid", account.accountId)
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
      const admin = EmulatorAdminClient.make(emulator.baseUrl)
      const missing = yield* Effect.flip(admin.seedJobs("no-such-account", 5))
      expect(missing).toMatchObject({ _tag: "EmulatorAdminError", operation: "seedJobs", reason: "seedJobs: no account no-such-account" })
      const bad = yield* http(`${emulator.baseUrl}/__admin/advanceClock`, { method: "POST", body: JSON.stringify({ seconds: "ten" }) })
      expect(bad.status).toBe(400)
      expect(bad.json.error.reason).toContain("seconds")
      const unknown = yield* http(`${emulator.baseUrl}/__admin/dropDatabase`, { method: "POST", body: "{}" })
      expect(unknown.status).toBe(404)
    })
  )

  it.scopedLive("without admin enabled /__admin/ is not served", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({})
      const error = yield* Effect.flip(EmulatorAdminClient.make(emulator.baseUrl).stats())
      expect(error.reason).toContain("--admin")
    })
  )
})

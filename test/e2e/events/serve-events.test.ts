import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { runCli, spawnCli } from "../../support/cli.js"
import { connectAccount, freePort, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { waitForHealth } from "../../support/webhookDelivery.js"

const harness = syncHarness({ accounts: 1, jobs: 400, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } })

/** A webhook delivery as the service signs it: HMAC-SHA256 of the raw body with the client secret, base64. */
const deliver = (base: string, secret: string, appId: string, event: { topic: string; accountId: string; itemId: string; occuredAt: string }) =>
  Effect.promise(async () => {
    const body = JSON.stringify({ data: { webHookEvent: { appId, ...event } } })
    const signature = crypto.createHmac("sha256", secret).update(body).digest("base64")
    const started = performance.now()
    const response = await fetch(`${base}/webhooks`, { method: "POST", headers: { "content-type": "application/json", "x-service-hmac-sha256": signature }, body })
    return { status: response.status, ms: performance.now() - started, body: await response.text() }
  })

layer(harness, { timeout: 120_000, excludeTestServices: true })("serve applies change events (child processes)", (it) => {
  it.scoped("deliveries are answered at once and applied in the background; events queued when serve is killed are applied after its restart, once", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      expect((yield* (yield* SyncRunner).run({ mode: "backfill" }))[0]!.outcome).toBe("synced")
      const settings = yield* TestSettings
      const env = { ...(yield* TestDatabase).env, ...settings }
      const port = yield* freePort
      const base = `http://127.0.0.1:${port}`
      // the webhook's form of the account id: the base64 of its number
      const number = /(\d+)$/.exec(Buffer.from(accountId, "base64").toString())![1]!
      const webhookAccountId = Buffer.from(number).toString("base64")

      // 1. a serve that looks for due events only once an hour: what it receives stays queued when it is killed
      const first = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], { ...env, EVENTS_POLL_INTERVAL: "1 hour" })
      yield* waitForHealth(base, first.child)
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 5, seed: 21 })).ids
      const deleted = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 3, seed: 22 })).ids.filter((id) => !edited.includes(id))
      const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [j.id, String(j.updatedAt)]))
      const { nowMs } = yield* admin.clock()
      const deliveries = [
        ...edited.filter((id) => updatedAt.has(id)).map((id) => ({ topic: "JOB_UPDATE", accountId: webhookAccountId, itemId: id, occuredAt: updatedAt.get(id)! })),
        ...deleted.map((id) => ({ topic: "JOB_DESTROY", accountId: webhookAccountId, itemId: id, occuredAt: new Date(nowMs).toISOString() }))
      ]
      for (const d of deliveries) {
        const answer = yield* deliver(base, settings.SERVICE_CLIENT_SECRET!, settings.SERVICE_CLIENT_ID!, d)
        expect(answer.status, answer.body).toBe(200)
        expect(answer.ms).toBeLessThan(1000)
      }
      // a forged delivery changes nothing
      const forged = yield* deliver(base, "not-the-secret", settings.SERVICE_CLIENT_ID!, { topic: "JOB_DESTROY", accountId: webhookAccountId, itemId: edited[0]!, occuredAt: new Date(nowMs).toISOString() })
      expect(forged.status).toBe(401)
      first.child.kill("SIGKILL")
      yield* first.exit
      const sql = yield* SqlClient.SqlClient
      const waiting = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = ${accountId} AND state = 'pending'`
      expect(waiting[0]!.n).toBe(deliveries.length)

      // 2. restarted as usual: every queued event is applied, each once
      const second = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
      yield* waitForHealth(base, second.child)
      yield* expectStreamExact(jobScalarsStream, accountId).pipe(
        Effect.catchAllDefect((e) => Effect.fail(e)),
        Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.intersect(Schedule.recurs(80))))
      )
      const states = yield* sql<{ state: string; attempts: number; n: number }>`
        SELECT state, attempts, count(*)::int AS n FROM webhook_events WHERE account_id = ${accountId} GROUP BY state, attempts`
      expect(states).toEqual([{ state: "applied", attempts: 1, n: deliveries.length }])
      const metrics = yield* Effect.promise(() => fetch(`${base}/metrics`).then((r) => r.text()))
      // counted by the consumer's own thread (a real Postgres: it runs in a worker) and shown by serve
      const applied = [...metrics.matchAll(/^account_sync_events_applied_total\{[^}]*account_id="([^"]+)"[^}]*\} (\d+)$/gm)]
      expect(applied.filter((m) => m[1] === accountId).map((m) => Number(m[2]))).toEqual([deliveries.length])
      expect(metrics).toContain("account_sync_event_lag_seconds_bucket")
      second.child.kill("SIGTERM")
      const secondExit = yield* second.exit
      expect(secondExit.code).toBe(143)
      expect(secondExit.stdout + secondExit.stderr).toContain("change events are applied in a worker thread")

      // 3. status tells what was applied last
      const status = yield* runCli(["status", "--json"], env)
      const connection = (JSON.parse(status.stdout) as { connections: Array<{ accountId: string; events: { waiting: number; lastApplied: { topic: string } | null } }> })
        .connections.find((c) => c.accountId === accountId)!
      expect(connection.events.waiting).toBe(0)
      expect(connection.events.lastApplied?.topic).toMatch(/^JOB_/)
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { enqueuingLayer } from "../../../src/jobs/JobQueue.js"
import { spawnCli } from "../../support/cli.js"
import { withEnv } from "../../support/config.js"
import { connectAccount, freePort, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { deliverWebhook, waitForHealth, webhookAccountIdOf } from "../../support/webhookDelivery.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { queueTestEnv, spawnWorker, waitUntil } from "../../support/workers.js"

// 3,000 jobs at 10,000 points/s restore: the account's first sync takes seconds, the burst arrives meanwhile
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: { ...queueTestEnv, WORKERS: "true" } }), {
  timeout: 180_000,
  excludeTestServices: true
})("change events with workers", (it) => {
  it.scoped("a burst of change events while the account syncs is applied by the account's one active job, never beside it, none lost", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const env = yield* TestSettings
      // connected as serve's callback or `connect` does with workers: the backfill job is enqueued at once
      yield* connectAccount(accountId).pipe(Effect.provide(enqueuingLayer.pipe(Layer.provide(withEnv(env)))))
      const queued = yield* sql<{ kind: string }>`SELECT data->>'kind' AS kind FROM ${sql(`${env.DB_SCHEMA}_queue`)}.job WHERE singleton_key = ${accountId}`
      expect(queued.map((j) => j.kind)).toEqual(["backfill"])
      const port = yield* freePort
      const base = `http://127.0.0.1:${port}`
      const webhookAccountId = webhookAccountIdOf(accountId)

      const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
      yield* waitForHealth(base, serve.child)
      yield* spawnWorker(env)
      const landed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`, (r) => r[0]!.n).pipe(Effect.orDie)
      yield* waitUntil("the first sync landing pages", 60, Effect.map(landed, (n) => n >= 300))

      // the burst: 40 edits at the service, each delivered as its webhook while the full pass runs
      const edited = yield* admin.editRecords({ accountId, collection: "jobs", count: 40, seed: 7 })
      const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [String(j.id), String(j.updatedAt)]))
      for (const id of edited.ids) {
        const answer = yield* deliverWebhook(base, env, { topic: "JOB_UPDATE", accountId: webhookAccountId, itemId: id, occuredAt: updatedAt.get(id)! })
        expect(answer.status, answer.body).toBe(200)
      }
      const [run] = yield* sql<{ finished_at: Date | null }>`SELECT finished_at FROM sync_runs WHERE account_id = ${accountId} AND kind = 'full'`
      expect(run!.finished_at).toBeNull()

      yield* waitUntil("every event applied", 90, Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE state = 'applied'`.pipe(Effect.orDie), (r) => r[0]!.n === edited.ids.length))
      yield* waitUntil("the sync done", 90, Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_runs WHERE account_id = ${accountId} AND outcome = 'running'`.pipe(Effect.orDie), (r) => r[0]!.n === 0))
      const [sync] = yield* sql<{ started_at: Date; outcome: string }>`SELECT started_at, outcome FROM sync_runs WHERE account_id = ${accountId} AND kind = 'full'`
      expect(sync!.outcome).toBe("succeeded")
      const events = yield* sql<{ applied_at: Date; state: string }>`SELECT applied_at, state FROM webhook_events WHERE account_id = ${accountId}`
      expect(events.length).toBe(edited.ids.length)
      // every one of them applied, by the sync's run between two of its pages or by an events job after it (the
      // account's jobs run one at a time; eventsDuringBackfill.test.ts times those applied mid-pass)
      for (const e of events) expect(e.applied_at.getTime()).toBeGreaterThanOrEqual(sync!.started_at.getTime())
      // repeats collapsed: far fewer events jobs than deliveries
      const jobs = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${env.DB_SCHEMA}_queue`)}.job WHERE data->>'kind' = 'events'`
      expect(jobs[0]!.n).toBeLessThan(edited.ids.length)
      expect(jobs[0]!.n).toBeGreaterThan(0)
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
      expect(serve.child.exitCode).toBeNull()
    }),
    240_000
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { enqueuingLayer } from "../../../src/jobs/JobQueue.js"
import { spawnCli } from "../../support/cli.js"
import { withEnv } from "../../support/config.js"
import { connectAccount, freePort, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { deliverWebhook, waitForHealth, webhookAccountIdOf } from "../../support/webhookDelivery.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { queueTestEnv, spawnWorker, waitUntil } from "../../support/workers.js"

const jobs = 12_000
const rounds = 5
const editsPerRound = 4

// 12,000 jobs, every answer 250 ms late: the backfill takes far longer than the rounds of edits below
layer(syncHarness({ accounts: 1, jobs, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: { ...queueTestEnv, WORKERS: "true" } }), {
  timeout: 480_000,
  excludeTestServices: true
})("change events during a backfill", (it) => {
  it.scoped("edits delivered mid-backfill land within 5 s (all but one of 20), applied by the backfill's run between two pages; the warehouse ends exact", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const env = yield* TestSettings
      yield* admin.setFaults({ latencyRate: 1, latencyMs: 250, seed: 5 })
      yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
      // connected as serve's callback does with workers: the backfill job is enqueued at once
      yield* connectAccount(accountId).pipe(Effect.provide(enqueuingLayer.pipe(Layer.provide(withEnv(env)))))
      const port = yield* freePort
      const base = `http://127.0.0.1:${port}`
      const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
      yield* waitForHealth(base, serve.child)
      const worker = yield* spawnWorker(env)
      const landed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`, (r) => r[0]!.n).pipe(Effect.orDie)
      yield* waitUntil("the backfill landing pages", 60, Effect.map(landed, (n) => n >= 500))
      const [backfill] = yield* sql<{ id: number }>`SELECT id::int AS id FROM sync_runs WHERE account_id = ${accountId} AND kind = 'full' AND outcome = 'running'`
      expect(backfill).toBeDefined()

      const latencies: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        // rows the backfill already landed, edited at the service, each delivered as its webhook at once
        const ids = (yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId} ORDER BY md5(id || ${String(round)}) LIMIT ${editsPerRound}`).map((r) => r.id)
        yield* admin.editRecords({ accountId, collection: "jobs", ids, seed: 100 + round })
        const service = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [String(j.id), j]))
        const sentAt = new Map<string, number>()
        for (const id of ids) {
          sentAt.set(id, Date.now())
          const answer = yield* deliverWebhook(base, env, { topic: "JOB_UPDATE", accountId: webhookAccountIdOf(accountId), itemId: id, occuredAt: String(service.get(id)!.updatedAt) })
          expect(answer.status, answer.body).toBe(200)
        }
        const titles = (sql<{ id: string; title: string | null; updated_at: Date }>`SELECT id, title, updated_at FROM jobs WHERE account_id = ${accountId} AND id IN ${sql.in(ids)}`).pipe(Effect.orDie)
        const current = (rows: ReadonlyArray<{ id: string; updated_at: Date }>) =>
          rows.length === ids.length && rows.every((r) => r.updated_at.getTime() === Date.parse(String(service.get(r.id)!.updatedAt)))
        // polled, not asserted: the assertions below read the times the database recorded
        yield* waitUntil(`round ${round}: the edited rows in the warehouse`, 60, Effect.map(titles, current))
        const rows = yield* titles
        for (const r of rows) expect(r.title).toBe(service.get(r.id)!.title ?? null)
        const applied = yield* sql<{ item_id: string; applied_at: Date }>`
          SELECT item_id, applied_at FROM webhook_events WHERE account_id = ${accountId} AND item_id IN ${sql.in(ids)} AND state = 'applied'`
        expect(applied.map((e) => e.item_id).sort()).toEqual([...ids].sort())
        const [run] = yield* sql<{ outcome: string; finished_at: Date | null }>`SELECT outcome, finished_at FROM sync_runs WHERE id = ${backfill!.id}`
        // the backfill's run still running as the rows landed: they were applied between two of its pages
        expect(run).toEqual({ outcome: "running", finished_at: null })
        for (const e of applied) latencies.push(e.applied_at.getTime() - sentAt.get(e.item_id)!)
      }
      yield* Effect.sync(() => console.info(`events during a backfill: event to warehouse ${latencies.map((ms) => (ms / 1000).toFixed(2)).join(", ")} s`))
      // within 5 s all but one (a loaded machine may hold one back; the p99 goal is the bench's
      // freshness.duringBackfillP99Seconds), and each far inside the slice's 5 minutes
      const sorted = [...latencies].sort((a, b) => a - b)
      expect(sorted[sorted.length - 2]).toBeLessThan(5000)
      expect(sorted[sorted.length - 1]).toBeLessThan(30_000)
      // no run of the account beside the backfill's: every event was applied by it (the events jobs found nothing left)
      const others = yield* sql<{ id: number }>`SELECT id::int AS id FROM sync_runs WHERE account_id = ${accountId} AND id <> ${backfill!.id}`
      expect(others).toEqual([])

      yield* waitUntil("the backfill done", 240, Effect.map(sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE id = ${backfill!.id}`.pipe(Effect.orDie), (r) => r[0]!.outcome !== "running"))
      const [done] = yield* sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE id = ${backfill!.id}`
      expect(done!.outcome).toBe("succeeded")
      const pending = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE state <> 'applied'`
      expect(pending[0]!.n).toBe(0)
      const queue = `${env.DB_SCHEMA}_queue`
      yield* waitUntil("the account's events jobs settled", 30, Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(queue)}.job WHERE data->>'kind' = 'events' AND state NOT IN ('completed')`.pipe(Effect.orDie), (r) => r[0]!.n === 0))
      yield* admin.setFaults({})
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
      expect(serve.child.exitCode).toBeNull()
      expect(worker.child.exitCode).toBeNull()
    }),
    480_000
  )
})

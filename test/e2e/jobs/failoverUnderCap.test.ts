import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { backfillsUnderCap } from "../../../bench/lib/workerFaults.js"
import { TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"
import { accountsFullySynced, enqueueBackfills, expectNoOverlappingRuns, jobsLanded, queueTestEnv, spawnWorker, syncRuns, waitUntil } from "../../support/workers.js"

const jobsPerAccount = 3000

// 8 accounts of 3,000 jobs, every answer 400 ms late: a backfill takes tens of seconds. The retry delay is the
// default's (5 s, doubling): a failover must not wait it out, nor wait behind the backfills it would let in.
const env = { ...queueTestEnv, QUEUE_BACKFILLS_AT_ONCE: "4", QUEUE_RETRY_DELAY_SECONDS: "5", QUEUE_RETRY_DELAY_MAX_SECONDS: "600" }

layer(syncHarness({ accounts: 8, jobs: jobsPerAccount, limits: { maxPoints: 100_000, restoreRate: 100_000 } }, { env }), {
  timeout: 420_000,
  excludeTestServices: true
})("failover with the backfill cap full", (it) => {
  it.scoped("8 backfills, cap 4, 2 workers: the worker holding 4 is killed mid-page; each of its accounts runs again within 30 s, ahead of the 4 waiting; exact", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const settings = yield* TestSettings
      yield* admin.setFaults({ latencyRate: 1, latencyMs: 400, seed: 3 })
      yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
      // every account's backfill, as connecting enqueues it, before any worker runs
      yield* enqueueBackfills(settings, accounts.map((a) => a.accountId))

      const first = yield* spawnWorker(settings, 4)
      const landed = jobsLanded
      // the first worker holds the cap: 4 backfills under way, each some pages in
      yield* waitUntil("4 backfills landing pages on the first worker", 120, Effect.map(landed, (rows) => rows.filter((r) => r.n >= 300).length >= 4))
      const second = yield* spawnWorker(settings, 4)
      // the second worker up (its own tick done), idle: the cap is full
      yield* Effect.sleep("5 seconds")
      const held = yield* sql<{ account_id: string }>`SELECT DISTINCT account_id FROM sync_runs WHERE outcome = 'running'`
      expect(held).toHaveLength(4)
      const killedAccounts = held.map((r) => r.account_id)
      const before = yield* landed
      for (const a of killedAccounts) expect(before.find((r) => r.account_id === a)?.n ?? 0).toBeLessThan(jobsPerAccount)
      // the cap's contention: the other accounts' backfills wait their turn as the kill comes
      const { waiting } = yield* backfillsUnderCap(`${settings.DB_SCHEMA}_queue`)
      expect(waiting, "backfills waiting under the cap when the kill comes").toBe(4)

      first.child.kill("SIGKILL")
      const killed = yield* first.exit
      expect(killed.signal).toBe("SIGKILL")
      const [{ at }] = (yield* sql<{ at: Date }>`SELECT now() AS at`) as unknown as [{ at: Date }]

      // each of the killed worker's accounts runs again (a new run's row) within 30 s of the kill
      const again = sql<{ account_id: string; seconds: number }>`
        SELECT account_id, extract(epoch FROM min(started_at) - ${at}::timestamptz)::float AS seconds FROM sync_runs
        WHERE started_at > ${at}::timestamptz AND account_id IN ${sql.in(killedAccounts)} GROUP BY account_id`
      yield* waitUntil("the killed worker's 4 accounts running again", 60, Effect.map(Effect.orDie(again), (rows) => rows.length === 4))
      const resumedAfter = yield* Effect.orDie(again)
      // what the queue did with a late account's jobs, said with the failure (a rare case: seen once at 34 s)
      const jobsOf = (accountId: string) =>
        sql<Record<string, unknown>>`
          SELECT state, retry_count, priority, created_on, start_after, started_on, completed_on, output FROM ${sql(`${settings.DB_SCHEMA}_queue`)}.job
          WHERE data->>'accountId' = ${accountId} ORDER BY created_on`.pipe(Effect.map((rows) => JSON.stringify(rows)), Effect.orElseSucceed(() => "(unread)"))
      for (const r of resumedAfter) {
        const why = r.seconds > 30 ? ` (its jobs: ${yield* jobsOf(r.account_id)})` : ""
        expect(r.seconds, `account ${r.account_id} ran again ${r.seconds} s after the kill${why}`).toBeLessThanOrEqual(30)
      }
      yield* Effect.sync(() => console.info(`failover under a full cap: ${resumedAfter.map((r) => r.seconds.toFixed(1)).join(", ")} s after the kill`))
      // the failover measured: the rest of the backfills need not answer late to end exact
      yield* admin.setFaults({})

      yield* waitUntil(
        "every account's backfill done",
        300,
        Effect.map(accountsFullySynced, (n) => n === 8)
      )
      for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(jobsPerAccount)
      const runs = yield* syncRuns
      expectNoOverlappingRuns(runs.filter((r) => r.outcome !== "running"))
      expect(runs.filter((r) => r.outcome === "running")).toEqual([])
      expect(second.child.exitCode).toBeNull()
    }),
    420_000
  )
})

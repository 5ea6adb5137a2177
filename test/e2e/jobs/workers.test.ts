import { SqlClient } from "@effect/sql"
import { accountsLeasedTo } from "../../../bench/lib/workerFaults.js"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestSettings, connectAccount, freePort } from "../../support/connector.js"
import { promtoolAvailable, promtoolCheck } from "../../support/promtool.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { runCli } from "../../support/cli.js"
import type { queueJson } from "../../../src/cli/status.js"
import { backfillEnqueuedAtLatency, expectNoOverlappingRuns, queueTestEnv, spawnWorker, syncRuns, waitUntil, withQueue } from "../../support/workers.js"

type QueueJson = ReturnType<typeof queueJson>

const succeededRuns = (kind: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(DISTINCT account_id)::int AS n FROM sync_runs WHERE outcome = 'succeeded' AND kind = ${kind}`
    return rows[0]!.n
  }).pipe(Effect.orDie)

layer(syncHarness({ accounts: 20, jobs: 40 }, { env: { ...queueTestEnv, SYNC_INCREMENTAL_EVERY: "5 seconds" } }), {
  timeout: 180_000,
  excludeTestServices: true
})("two workers over 20 accounts", (it) => {
  it.scoped("every due account is synced once per due time, by one worker at a time", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const env = yield* TestSettings
      const metricsPort = yield* freePort
      const workers = [yield* spawnWorker({ ...env, METRICS_PORT: String(metricsPort) }), yield* spawnWorker(env)]

      // due time 1: never synced, each account gets its first full pass (the workers' own tick at start)
      yield* waitUntil("every account's first full pass", 90, Effect.map(succeededRuns("full"), (n) => n === 20))
      // due time 2: SYNC_INCREMENTAL_EVERY after that, a tick of the schedule makes every account due again (the only
      // ticks are the workers' own at start and this one, so no account can take a second incremental pass)
      yield* Effect.sleep("6 seconds")
      yield* withQueue(env, (queue) => queue.tick)
      yield* waitUntil("every account's incremental pass", 60, Effect.map(succeededRuns("incremental"), (n) => n === 20))
      yield* Effect.sleep("1 second")

      const runs = yield* syncRuns
      const perAccount = new Map<string, Array<string>>()
      for (const r of runs) perAccount.set(r.account_id, [...(perAccount.get(r.account_id) ?? []), `${r.kind} ${r.outcome}`])
      for (const a of accounts) expect(perAccount.get(a.accountId), a.accountId).toEqual(["full succeeded", "incremental succeeded"])
      expectNoOverlappingRuns(runs)
      for (const a of accounts.slice(0, 3)) yield* expectStreamExact(jobScalarsStream, a.accountId)
      // the first worker's metrics: jobs it ran, due-to-start latency, durations, the queue's depth per kind
      const metrics = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()))
      const done = [...metrics.matchAll(/^account_sync_jobs_total\{([^}]*)\} (\d+)$/gm)].filter((m) => m[1]!.includes('outcome="done"') && m[1]!.includes('kind="sync"'))
      expect(done.reduce((n, m) => n + Number(m[2]), 0)).toBeGreaterThan(0)
      expect(metrics).toContain("account_sync_job_due_to_start_seconds_bucket")
      expect(metrics).toContain("account_sync_job_duration_seconds_bucket")
      expect(metrics).toMatch(/^account_sync_queue_jobs\{[^}]*kind="sync"[^}]*\} \d+$/m)
      if (promtoolAvailable) {
        const check = yield* promtoolCheck(metrics)
        expect(check.code, check.output).toBe(0)
      }
      // both took a share (the queue spreads the accounts), and both stop on SIGTERM
      for (const w of workers) w.child.kill("SIGTERM")
      for (const w of workers) {
        const ended = yield* w.exit
        expect(ended.code, ended.stderr.slice(-2000)).toBe(143)
        expect(ended.stderr).toContain("done: synced")
      }
    }),
    240_000
  )
})

// 2 accounts of 3,000 jobs at 10,000 points/s restore: a backfill takes seconds, long enough to kill a worker mid-way
layer(syncHarness({ accounts: 2, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: queueTestEnv }), {
  timeout: 180_000,
  excludeTestServices: true
})("failover", (it) => {
  it.scoped("a worker killed with SIGKILL mid-page: its accounts finish on the other within 60 s, exact", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const env = yield* TestSettings
      const first = yield* spawnWorker(env)
      const landed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`, (r) => r[0]!.n).pipe(Effect.orDie)
      yield* waitUntil("the first worker landing pages", 60, Effect.map(landed, (n) => n >= 600))
      // every answer 3 s late until the kill: the backfills must still be under way when it comes, however long status
      // and the second worker's start take on a loaded machine (unslowed, they ended first at load 10)
      yield* admin.setFaults({ latencyRate: 1, latencyMs: 3_000, seed: 3 })
      yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
      // status shows the queue: the running jobs per kind, which worker holds which account, when each is next due
      const status = yield* runCli(["status", "--json"], env)
      expect(status.code, status.stderr).toBe(0)
      const queue = (JSON.parse(status.stdout) as { queue: QueueJson }).queue
      expect(queue.kinds.find((k) => k.kind === "sync")!.active).toBe(2)
      expect(queue.accounts.map((a) => a.running?.kind)).toEqual(["sync", "sync"])
      for (const a of queue.accounts) expect(a.heldBy).toMatch(new RegExp(`worker .*:${first.child.pid}`))
      const second = yield* spawnWorker(env)
      first.child.kill("SIGKILL")
      const killed = yield* first.exit
      expect(killed.signal).toBe("SIGKILL")
      const atKill = yield* landed
      expect(atKill).toBeLessThan(6000)
      yield* admin.setFaults({})

      const seconds = yield* waitUntil("both accounts' full passes on the second worker", 60, Effect.map(succeededRuns("full"), (n) => n === 2))
      expect(seconds).toBeLessThanOrEqual(60)
      for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(3000)
      const runs = yield* syncRuns
      expectNoOverlappingRuns(runs.filter((r) => r.outcome !== "running"))
      expect(second.child.exitCode).toBeNull()
      // the killed worker's runs stay 'running' until the account is synced again, then are closed as interrupted
      expect(runs.filter((r) => r.outcome === "running")).toEqual([])
    }),
    240_000
  )
})

// the first worker's slices of 60 s, every answer 500 ms late: a SIGTERM sent a moment after its first pages lands inside
// a slice, not in the gap before the follow-up job is claimed (with 1 s slices at load 10, and 4 s slices in a loaded
// CI run whose first 300 rows took 3.1 s, it did)
// a heartbeat of 60 s: a worker taking the account within 30 s was handed it, not given it by a lapsed heartbeat
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: { ...queueTestEnv, QUEUE_SLICE: "60 seconds", QUEUE_HEARTBEAT_SECONDS: "60" } }), {
  timeout: 300_000,
  excludeTestServices: true
})("slices", (it) => {
  it.scoped("a backfill larger than one slice continues across follow-up jobs and ends exact", () =>
    Effect.gen(function* () {
      // the account's first full pass as a backfill job (as a connect enqueues it), before any worker runs
      const { accountId, env, admin } = yield* backfillEnqueuedAtLatency(500, 4)
      const sql = yield* SqlClient.SqlClient
      const landed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`, (r) => r[0]!.n).pipe(Effect.orDie)
      // a worker stopped with SIGTERM mid-backfill exits at once and hands the account back: the next worker takes it
      // without waiting for a heartbeat to lapse
      const first = yield* spawnWorker(env)
      yield* waitUntil("the first worker landing pages", 60, Effect.map(landed, (n) => n >= 300))
      first.child.kill("SIGTERM")
      const stopped = yield* first.exit
      expect(stopped.code, stopped.stderr.slice(-2000)).toBe(143)
      expect(stopped.stderr).toContain("handed-back")
      expect(yield* accountsLeasedTo(first.child.pid!)).toEqual([])
      // the rest at full speed, in slices of 1 s: the next worker's runs cross slice ends too
      yield* admin.setFaults({})
      const runsBefore = (yield* syncRuns).length
      yield* spawnWorker({ ...env, QUEUE_SLICE: "1 second" })
      // before the lease (30 s) or the heartbeat (60 s) could lapse, the new process's start included
      yield* waitUntil("the account taken by the next worker", 29, Effect.map(syncRuns, (runs) => runs.length > runsBefore))
      // each 1 s slice lands what it fetched before its end (sliceEnd.test.ts): interrupted mid-page as it was, the
      // rest took over 120 s, then over 240 s (a timeout), in the Node 26 suites of two clean-clone CIs at load ~12
      yield* waitUntil("the backfill's end", 240, Effect.map(succeededRuns("full"), (n) => n === 1))
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
      const runs = yield* syncRuns
      // sliced: several runs, each interrupted at its slice's end but the last, each resuming where the last stopped
      expect(runs.length - runsBefore).toBeGreaterThan(1)
      expect(runs.slice(0, -1).every((r) => r.outcome === "interrupted")).toBe(true)
      expect(runs[runs.length - 1]!.outcome).toBe("succeeded")
      expectNoOverlappingRuns(runs)
    }),
    240_000
  )
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as os from "node:os"
import { JobQueue } from "../../src/jobs/JobQueue.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { quantile } from "./quantile.js"
import { count, drained, overlappingRuns, procSample, queueOf, runsByAccount, say, startWorker, waitFor, withAccounts } from "./scaleWorkers.js"
import { BenchError } from "./errors.js"
import { healingRuns } from "./scaleHealing.js"
import { type Bound, type BoundShares, decideBound, describeShares, describeStartSpread, permitSeconds, startBoundProbe, startSpread, type StartSpread, withMetricsPort } from "./scaleBound.js"
import { idleCycleBench } from "./idleCycle.js"
import { type ScaleOptions, type ScalePart, scaleParts } from "./scaleOptions.js"

export interface WorkersRun {
  readonly processes: number
  readonly rowsPerSecond: number
  /** Against the rows/s the summed buckets allow (every account's backfill at its bucket's pace, all at once). */
  readonly ratioToCeiling: number
  /** Against the same figure with one worker. */
  readonly ratioToOneWorker: number
  readonly cpuSecondsPerWorker: number
  readonly peakRssMbPerWorker: number
  /** What held it back, decided from `shares` (see decideBound). */
  readonly bound: Bound
  readonly shares: BoundShares
  /** The emulator process's CPU seconds per wall second over the run, and the machine's load average at its end. */
  readonly emulatorCpuShare: number
  readonly loadAverage: number
  readonly seconds: number
  readonly floorSeconds: number
  readonly pointsPerRow: number
  /** When the accounts started (claimed, first run begun) and how long each took: see StartSpread. */
  readonly startSpread?: StartSpread
}

/** A scale result with every part's figures (a run of all its parts). */
export const hasRuns = <T extends ScaleResult>(r: T): r is T & ScaleRuns & Required<Pick<ScaleResult, "idleCycle">> =>
  "workers" in r && "failoverSeconds" in r && "failoverSecondsUnderCap" in r && "idleCycle" in r

export interface ScaleResult extends Partial<ScaleRuns> {
  readonly idleCycle?: Effect.Effect.Success<ReturnType<typeof idleCycleBench>>
  readonly settings: ScaleOptions
  readonly loadAverageBefore: ReadonlyArray<number>
}

export interface ScaleRuns {
  readonly claimsPerSecond: number
  readonly dueToStartP50Seconds: number
  readonly dueToStartP99Seconds: number
  readonly failoverSeconds: number
  readonly failoverSecondsUnderCap: number
  /** Backfills waiting under the cap when the worker holding it was killed (failoverSecondsUnderCap's contention). */
  readonly backfillsWaitingAtCapKill: number
  readonly hungWorkerReleaseSeconds: number
  readonly doubleRuns: number
  readonly workers: ReadonlyArray<WorkersRun>
  /** The 1-worker figure of `workers` (with 1,000 accounts: the one worker holding 1,000 in flight). */
  readonly oneWorker1000?: { readonly accounts: number; readonly ratioToCeiling: number; readonly peakRssMb: number }
  readonly oneWorker500?: { readonly accounts: number; readonly ratioToCeiling: number; readonly peakRssMb: number; readonly rowsPerSecond: number; readonly seconds: number; readonly cpuSeconds: number; readonly cpuSecPer10k: number }
}

/** Wall time from the first run's start to the last one's end, the rows and points of every succeeded run. */
const runTotals = (sql: SqlClient.SqlClient) =>
  Effect.map(
    Effect.orDie(sql<{ seconds: number; rows: number; points: number; done: number }>`
      SELECT extract(epoch FROM max(finished_at) - min(started_at))::float8 AS seconds, sum(rows)::int AS rows,
        sum(cost_points)::float8 AS points, count(*) FILTER (WHERE outcome = 'succeeded')::int AS done FROM sync_runs`),
    (r) => r[0]!
  )

/** 1, 2, 4 workers over the accounts (each time from nothing synced): rows/s against the buckets' ceiling. */
const workersRuns = (emulator: EmulatorProcess, o: ScaleOptions) =>
  withAccounts(emulator, { accounts: o.accounts, jobs: o.jobsPerAccount, limits: { maxPoints: o.maxPoints, restoreRate: o.restoreRate }, poolSize: 12 }, (env) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const runs: Array<WorkersRun> = []
      let doubleRuns = 0
      for (const processes of o.processes) {
        yield* Effect.orDie(sql`TRUNCATE jobs, sync_checkpoints, sync_runs, sync_pass_seen`)
        // and the last run's jobs (none exists before the first run's workers set the queue up)
        yield* Effect.orDie(sql.unsafe(`DO $$ BEGIN IF to_regclass('${env.DB_SCHEMA}_queue.job') IS NOT NULL THEN DELETE FROM ${env.DB_SCHEMA}_queue.job; END IF; END $$`))
        // every run starts from full buckets, as its ceiling counts them: the run before left them spent (its last
        // pages cut to the rows left spend what they wait for)
        yield* Effect.orDie(emulator.admin.advanceClock({ seconds: o.maxPoints / o.restoreRate + 1 }))
        yield* say(`${processes} worker(s) x ${o.concurrencyPerWorker} over ${o.accounts} accounts of ${o.jobsPerAccount} jobs, bucket ${o.maxPoints} points at ${o.restoreRate}/s`)
        const emulatorBefore = procSample(emulator.pid).cpuSeconds
        const samples = yield* Effect.scoped(
          Effect.gen(function* () {
            const ported = yield* Effect.forEach(Array.from({ length: processes }), () => withMetricsPort(env))
            const workers = yield* Effect.forEach(ported, (p) => startWorker(p.env, o.concurrencyPerWorker))
            const probe = yield* startBoundProbe(env.DATABASE_APPLICATION_NAME ?? "account-sync", workers.map((w) => w.pid))
            yield* waitFor(`${o.accounts} accounts synced`, 1800, drained(sql, `${env.DB_SCHEMA}_queue`, o.accounts))
            const s = workers.map((w) => w.sample())
            const permits = yield* Effect.forEach(ported, (p) => permitSeconds(p.port))
            for (const w of workers) yield* w.kill("SIGTERM")
            return { s, probe, permits }
          })
        )
        doubleRuns += yield* overlappingRuns(sql)
        const totals = yield* runTotals(sql)
        const pointsPerRow = totals.points / totals.rows
        const floorSeconds = Math.max(0, (o.jobsPerAccount * pointsPerRow - o.maxPoints) / o.restoreRate)
        const rowsPerSecond = totals.rows / totals.seconds
        const ratioToCeiling = floorSeconds / totals.seconds
        const cpuSecondsPerWorker = samples.s.reduce((n, s) => n + s.cpuSeconds, 0) / processes
        const peakRssMbPerWorker = Math.max(...samples.s.map((s) => s.peakRssMb))
        const emulatorCpuShare = (procSample(emulator.pid).cpuSeconds - emulatorBefore) / totals.seconds
        const loadAverage = os.loadavg()[0]!
        const shares = yield* samples.probe.finish({
          queueSchema: `${env.DB_SCHEMA}_queue`,
          wallSeconds: totals.seconds,
          workersCpuSeconds: cpuSecondsPerWorker * processes,
          emulatorCpuShare,
          permitWaitSeconds: samples.permits.reduce((n, p) => n + p.waited, 0),
          permitsFullSeconds: samples.permits.reduce((n, p) => n + p.full, 0),
          processes
        })
        const spread = yield* startSpread(`${env.DB_SCHEMA}_queue`, samples.probe.cpuBetween)
        const bound = decideBound(ratioToCeiling, shares, spread.cpuWhileBeginning)
        const run: WorkersRun = {
          processes,
          rowsPerSecond,
          ratioToCeiling,
          ratioToOneWorker: runs[0] ? rowsPerSecond / runs[0].rowsPerSecond : 1,
          cpuSecondsPerWorker,
          peakRssMbPerWorker,
          bound,
          shares,
          emulatorCpuShare,
          loadAverage,
          seconds: totals.seconds,
          floorSeconds,
          pointsPerRow,
          startSpread: spread
        }
        runs.push(run)
        yield* say(
          `${processes} worker(s): ${Math.round(rowsPerSecond)} rows/s in ${totals.seconds.toFixed(1)} s, ratio ${ratioToCeiling.toFixed(3)} (${bound}), CPU ${cpuSecondsPerWorker.toFixed(1)} s and peak RSS ${peakRssMbPerWorker.toFixed(0)} MB per worker; load ${loadAverage.toFixed(1)}; ${describeShares(shares)}; ${describeStartSpread(spread)}`
        )
      }

      // dispatch, over the same accounts now synced (nothing due): events jobs with no event to apply
      yield* say(`dispatch: ${o.accounts} jobs with nothing to do, then ${o.steadyPerSecond}/s for ${o.steadySeconds} s, two workers`)
      const dispatch = yield* Effect.scoped(
        Effect.gen(function* () {
          const queue = yield* Effect.provide(JobQueue, queueOf(env))
          const schemaName = `${env.DB_SCHEMA}_queue`
          const accountIds = (yield* Effect.orDie(sql<{ account_id: string }>`SELECT account_id FROM connections ORDER BY account_id`)).map((r) => r.account_id)
          const now = new Date().toISOString()
          for (const accountId of accountIds) yield* Effect.orDie(queue.enqueue({ kind: "events", accountId, dueAt: now }))
          const workers = [yield* startWorker(env, o.concurrencyPerWorker), yield* startWorker(env, o.concurrencyPerWorker)]
          const finished = sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(schemaName)}.job WHERE data->>'kind' = 'events' AND state = 'completed'`
          yield* waitFor("the dispatch jobs", 600, Effect.map(count(finished), (n) => n >= accountIds.length))
          const [span] = yield* Effect.orDie(sql<{ seconds: number }>`
            SELECT extract(epoch FROM max(completed_on) - min(started_on))::float8 AS seconds FROM ${sql(schemaName)}.job WHERE data->>'kind' = 'events'`)
          const claimsPerSecond = accountIds.length / span!.seconds
          // steady: jobs arriving one by one, workers idle between them: how long from due to started
          yield* Effect.orDie(sql`DELETE FROM ${sql(schemaName)}.job WHERE data->>'kind' = 'events'`)
          const total = o.steadyPerSecond * o.steadySeconds
          for (let i = 0; i < total; i++) {
            yield* Effect.orDie(queue.enqueue({ kind: "events", accountId: accountIds[i % accountIds.length]!, dueAt: new Date().toISOString() }))
            yield* Effect.sleep(`${Math.round(1000 / o.steadyPerSecond)} millis`)
          }
          yield* waitFor("the steady jobs", 120, Effect.map(count(finished), (n) => n >= total))
          const latencies = (yield* Effect.orDie(sql<{ s: number }>`
            SELECT extract(epoch FROM started_on - GREATEST(created_on, start_after))::float8 AS s FROM ${sql(schemaName)}.job WHERE data->>'kind' = 'events'`)).map((r) => r.s)
          for (const w of workers) yield* w.kill("SIGTERM")
          return { claimsPerSecond, dueToStartP50Seconds: quantile(latencies, 0.5), dueToStartP99Seconds: quantile(latencies, 0.99) }
        })
      )
      yield* say(`dispatch: ${dispatch.claimsPerSecond.toFixed(0)} claims/s; due to start p50 ${dispatch.dueToStartP50Seconds.toFixed(2)} s, p99 ${dispatch.dueToStartP99Seconds.toFixed(2)} s`)
      return { runs, doubleRuns, ...dispatch }
    })
  )

/** Two workers share the accounts; the one holding some is SIGKILLed: seconds until each of its accounts runs elsewhere. */
const failoverRun = (emulator: EmulatorProcess, o: ScaleOptions) =>
  withAccounts(emulator, { accounts: o.failoverAccounts, jobs: o.failoverJobs, limits: { maxPoints: 10_000, restoreRate: 10_000 }, poolSize: 10 }, (env) =>
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = yield* startWorker(env, o.failoverAccounts)
        const firstWorkerState = Effect.map(runsByAccount, (runs) => `runs: ${runs}; the first worker's log: ${first.tail().slice(-3500)}`)
        yield* waitFor(
          "the first worker running every account",
          120,
          Effect.map(count(sql<{ n: number }>`SELECT count(DISTINCT account_id)::int AS n FROM sync_runs WHERE outcome = 'running'`), (n) => n >= o.failoverAccounts),
          firstWorkerState
        )
        yield* Effect.sleep("2 seconds")
        const second = yield* startWorker(env, o.failoverAccounts)
        yield* Effect.sleep("3 seconds")
        const held = (yield* Effect.orDie(sql<{ account_id: string }>`SELECT DISTINCT account_id FROM sync_runs WHERE outcome = 'running'`)).map((r) => r.account_id)
        if (held.length === 0) return yield* new BenchError({ step: "scale", reason: `failover: no account still running when the worker was to be killed (${yield* firstWorkerState})` })
        const killedAt = new Date()
        yield* first.kill("SIGKILL")
        const resumed = sql<{ n: number }>`SELECT count(DISTINCT account_id)::int AS n FROM sync_runs WHERE started_at > ${killedAt}`
        yield* waitFor("the killed worker's accounts running elsewhere", 300, Effect.map(count(resumed), (n) => n >= held.length))
        const [last] = yield* Effect.orDie(sql<{ s: number }>`
          SELECT extract(epoch FROM max(first_start) - ${killedAt}::timestamptz)::float8 AS s
          FROM (SELECT account_id, min(started_at) AS first_start FROM sync_runs WHERE started_at > ${killedAt} GROUP BY account_id) f`)
        yield* waitFor("every account synced", 600, Effect.map(count(sql<{ n: number }>`SELECT count(DISTINCT account_id)::int AS n FROM sync_runs WHERE outcome = 'succeeded'`), (n) => n >= o.failoverAccounts))
        const double = yield* overlappingRuns(sql)
        yield* second.kill("SIGTERM")
        yield* say(`failover: ${held.length} account(s) of the SIGKILLed worker running on the other after ${last!.s.toFixed(1)} s`)
        return { failoverSeconds: last!.s, doubleRuns: double }
      })
    )
  )

/** One worker holding every account at once at the service's real bucket. */
export const oneWorkerRun = (emulator: EmulatorProcess, o: ScaleOptions) =>
  withAccounts(emulator, { accounts: o.oneWorkerAccounts, jobs: o.oneWorkerJobs, limits: { maxPoints: 10_000, restoreRate: 500 }, poolSize: 40 }, (env) =>
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* say(`one worker x ${o.oneWorkerAccounts} accounts of ${o.oneWorkerJobs} jobs at the real bucket (10,000 points, 500/s)`)
        const worker = yield* startWorker(env, o.oneWorkerAccounts)
        yield* waitFor("every account synced", 1800, drained(sql, `${env.DB_SCHEMA}_queue`, o.oneWorkerAccounts))
        const sample = worker.sample()
        yield* worker.kill("SIGTERM")
        const totals = yield* runTotals(sql)
        const pointsPerRow = totals.points / totals.rows
        const floorSeconds = Math.max(0, (o.oneWorkerJobs * pointsPerRow - 10_000) / 500)
        const double = yield* overlappingRuns(sql)
        const result = {
          accounts: o.oneWorkerAccounts,
          ratioToCeiling: floorSeconds / totals.seconds,
          peakRssMb: sample.peakRssMb,
          rowsPerSecond: totals.rows / totals.seconds,
          seconds: totals.seconds,
          cpuSeconds: sample.cpuSeconds,
          // the worker process's CPU per 10,000 rows landed, beside landing.cpuSecPer10k (one account, in process)
          cpuSecPer10k: (sample.cpuSeconds * 10_000) / totals.rows
        }
        yield* say(`one worker: ${Math.round(result.rowsPerSecond)} rows/s in ${totals.seconds.toFixed(1)} s (floor ${floorSeconds.toFixed(1)} s), ratio ${result.ratioToCeiling.toFixed(3)}, CPU ${result.cpuSecPer10k.toFixed(2)} s per 10k rows, peak RSS ${sample.peakRssMb.toFixed(0)} MB`)
        return { result, double }
      })
    )
  )

export const scaleBench = (emulator: EmulatorProcess, options: ScaleOptions) =>
  Effect.gen(function* () {
    const loadAverageBefore = os.loadavg().map((l) => Math.round(l * 100) / 100)
    const parts = new Set<ScalePart>(options.parts ?? scaleParts)
    const idleCycle = parts.has("idle") ? yield* idleCycleBench(emulator, options.idleCycle) : undefined
    const workers = parts.has("workers") ? yield* workersRuns(emulator, options) : undefined
    const failover = parts.has("failover") ? yield* failoverRun(emulator, options) : undefined
    const healing = parts.has("healing") ? yield* healingRuns(emulator, options.healing) : undefined
    const one = parts.has("oneWorker") ? yield* oneWorkerRun(emulator, options) : undefined
    const single = workers?.runs.find((r) => r.processes === 1)
    return {
      ...(workers ? { claimsPerSecond: workers.claimsPerSecond, dueToStartP50Seconds: workers.dueToStartP50Seconds, dueToStartP99Seconds: workers.dueToStartP99Seconds, workers: workers.runs } : {}),
      ...(failover ? { failoverSeconds: failover.failoverSeconds } : {}),
      ...(healing
        ? { failoverSecondsUnderCap: healing.failoverSecondsUnderCap, backfillsWaitingAtCapKill: healing.backfillsWaitingAtCapKill, hungWorkerReleaseSeconds: healing.hungWorkerReleaseSeconds }
        : {}),
      doubleRuns: (workers?.doubleRuns ?? 0) + (failover?.doubleRuns ?? 0) + (healing?.doubleRuns ?? 0) + (one?.double ?? 0),
      ...(single ? { oneWorker1000: { accounts: options.accounts, ratioToCeiling: single.ratioToCeiling, peakRssMb: single.peakRssMbPerWorker } } : {}),
      ...(one ? { oneWorker500: one.result } : {}),
      ...(idleCycle ? { idleCycle } : {}),
      settings: options,
      loadAverageBefore
    } satisfies ScaleResult
  })

import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Ref } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import type { Env } from "./connector.js"
import { machineCores } from "./machine.js"
import { mainThreadSchedule, procSample } from "./scaleWorkers.js"

/**
 * Where the accounts' time went in a scale run, measured: what decides its `bound`. CPU figures are shares of the
 * machine's cores; the waits and Postgres are shares of the accounts' time (each sync job from enqueued to completed).
 */
export interface BoundShares {
  /** The workers' CPU seconds per wall second, over the cores. */
  readonly workersCpu: number
  /** The machine's busy CPU over the run (every process: the workers, the emulator, Postgres, other users). */
  readonly machineCpu: number
  /** The emulator's CPU seconds per wall second (one process: near 1 it binds). */
  readonly emulatorCpu: number
  /** Waiting for the account's bucket to refill (sync_runs.throttle_wait_ms). */
  readonly bucketWait: number
  /** Held by a worker, waiting for one of its permits of CPU work (the workers' /metrics). */
  readonly permitWait: number
  /** Of the workers' wall time: every permit held (their CPU work set the pace; the workers' /metrics). */
  readonly permitsFull: number
  /** Enqueued, waiting for a worker to claim it (pg-boss's created to started). */
  readonly queueWait: number
  /** In a Postgres statement of a worker's sessions (pg_stat_activity sampled every 250 ms). */
  readonly postgres: number
}

export type Bound = "bucket" | "cpu" | "emulator" | "slots" | "postgres" | "other"

/**
 * At >= 0.9 of the ceiling the buckets bind. Else the wait that took the largest share of the accounts' time, when it
 * took at least a third. Waiting for a permit of CPU work, or for a worker to claim the account while its permits were
 * all held most of the time (a worker takes more accounts only while a permit is idle), is cpu when the machine's CPU
 * is near saturation (the permits are busy because the work is slow), else slots (too few permits, or a worker full
 * of accounts).
 * Postgres; the bucket. Else the machine's CPU near saturation, the emulator's one process near saturation, or other
 * (the service's answers, our own work). Before the waits: a run whose accounts began while a worker's main thread (its
 * event loop) was on a CPU or waiting for one nearly all the time, or the machine's cores were all busy, is cpu: a
 * bucket restores nothing until its account draws on it, so a start slowed by the CPU is what the ceiling lost.
 */
export const decideBound = (ratioToCeiling: number, s: BoundShares, whileBeginning?: CpuWindow): Bound => {
  if (ratioToCeiling >= 0.9) return "bucket"
  // the accounts began late because the CPU had no room: a worker's event loop always on a CPU or waiting for one, or
  // the machine's cores all busy, while they began
  if (whileBeginning !== undefined && (whileBeginning.workerMainThread + whileBeginning.workerMainThreadWaiting >= 0.9 || whileBeginning.machine >= 0.9)) return "cpu"
  const cpuSaturated = s.machineCpu >= 0.9
  const permitsBusy = s.permitsFull >= 0.5
  const waits: ReadonlyArray<readonly [Bound, number]> = [
    ["bucket", s.bucketWait],
    [cpuSaturated && permitsBusy ? "cpu" : "slots", s.queueWait],
    [cpuSaturated ? "cpu" : "slots", s.permitWait],
    ["postgres", s.postgres]
  ]
  const [largest, share] = waits.reduce((a, b) => (b[1] > a[1] ? b : a))
  if (share >= 1 / 3) return largest
  if (cpuSaturated) return "cpu"
  if (s.emulatorCpu >= 0.9) return "emulator"
  return "other"
}

const cpuTicks = () => {
  const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
  const total = fields.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

/** A free TCP port for a worker's /metrics. */
const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The worker's environment with a /metrics port of its own, and the port. */
export const withMetricsPort = (env: Env) => Effect.map(freePort, (port) => ({ env: { ...env, METRICS_PORT: String(port) } as Env, port }))

/**
 * From a worker's /metrics: the seconds its accounts waited for a permit, and the seconds every permit was held (0 when
 * it serves none: an older worker).
 */
export const permitSeconds = (port: number) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
    const text = await response.text()
    const sum = (name: string) => text.split("\n").filter((l) => l.startsWith(name)).reduce((n, l) => n + Number(l.split(" ").pop()), 0)
    return { waited: sum("account_sync_worker_permit_wait_seconds_total"), full: sum("account_sync_worker_permits_full_seconds_total") }
  }).pipe(Effect.orElseSucceed(() => ({ waited: 0, full: 0 })))

/**
 * Started when the workers start: samples the active statements of their sessions (application names start with
 * `<app> worker <host>:<pid>`) every 250 ms and the machine's CPU; `finish` gives the shares with what the run knows.
 */
export const startBoundProbe = (applicationName: string, pids: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const names = pids.map((pid) => `${applicationName} worker ${os.hostname()}:${pid}%`)
    const activeSamples = yield* Ref.make({ samples: 0, active: 0 })
    const cpuBefore = cpuTicks()
    // the machine's and the workers' CPU every half second: what bound the run's start (cpuBetween)
    const cpuSeries: Array<CpuSample> = []
    const cpuSampler = yield* Effect.fork(
      Effect.forever(
        Effect.zipRight(
          Effect.sync(() =>
            cpuSeries.push({
              atMs: Date.now(),
              machine: cpuTicks(),
              workersCpuSeconds: pids.reduce((n, pid) => n + procSample(pid).cpuSeconds, 0),
              mainThreads: pids.map(mainThreadSchedule).reduce((a, b) => ({ onCpuSeconds: a.onCpuSeconds + b.onCpuSeconds, waitingSeconds: a.waitingSeconds + b.waitingSeconds }))
            })
          ),
          Effect.sleep("500 millis")
        )
      )
    )
    const sampler = yield* Effect.fork(
      Effect.forever(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND application_name LIKE ANY(${names}::text[])`.pipe(
          Effect.flatMap((r) => Ref.update(activeSamples, (s) => ({ samples: s.samples + 1, active: s.active + (r[0]?.n ?? 0) }))),
          Effect.ignore,
          Effect.zipRight(Effect.sleep("250 millis"))
        )
      )
    )
    const finish = (run: {
      readonly queueSchema: string
      readonly wallSeconds: number
      readonly workersCpuSeconds: number
      readonly emulatorCpuShare: number
      readonly permitWaitSeconds: number
      readonly permitsFullSeconds: number
      readonly processes: number
    }) =>
      Effect.gen(function* () {
        yield* Fiber.interrupt(sampler)
        yield* Fiber.interrupt(cpuSampler)
        const cpuAfter = cpuTicks()
        const [jobs] = yield* Effect.orDie(sql<{ account_seconds: number; queued_seconds: number }>`
          SELECT coalesce(sum(extract(epoch FROM completed_on - created_on)), 0)::float8 AS account_seconds,
            coalesce(sum(extract(epoch FROM started_on - GREATEST(created_on, start_after))), 0)::float8 AS queued_seconds
          FROM ${sql(run.queueSchema)}.job WHERE name = 'account-work' AND data->>'kind' = 'sync' AND state = 'completed'`)
        const [runs] = yield* Effect.orDie(sql<{ waited: number }>`SELECT coalesce(sum(throttle_wait_ms), 0)::float8 / 1000 AS waited FROM sync_runs`)
        const { samples, active } = yield* Ref.get(activeSamples)
        const accountSeconds = Math.max(jobs!.account_seconds, 1e-9)
        const shares: BoundShares = {
          workersCpu: run.workersCpuSeconds / run.wallSeconds / machineCores(),
          machineCpu: (cpuAfter.busy - cpuBefore.busy) / Math.max(1, cpuAfter.total - cpuBefore.total),
          emulatorCpu: run.emulatorCpuShare,
          bucketWait: runs!.waited / accountSeconds,
          permitWait: run.permitWaitSeconds / accountSeconds,
          permitsFull: run.permitsFullSeconds / (run.wallSeconds * run.processes),
          queueWait: jobs!.queued_seconds / accountSeconds,
          postgres: samples === 0 ? 0 : ((active / samples) * run.wallSeconds) / accountSeconds
        }
        return shares
      })
    return { finish, cpuBetween: (fromMs: number, toMs: number) => cpuBetween(cpuSeries, fromMs, toMs, pids.length) }
  })

interface CpuSample {
  readonly atMs: number
  readonly machine: { readonly busy: number; readonly total: number }
  readonly workersCpuSeconds: number
  readonly mainThreads: { readonly onCpuSeconds: number; readonly waitingSeconds: number }
}

/** The CPU between two times (wall clock ms). */
export interface CpuWindow {
  readonly seconds: number
  /** The machine's busy share of its cores. */
  readonly machine: number
  /** The workers' CPU seconds a second (every thread: the event loop, the garbage collector's, libuv's). */
  readonly workers: number
  /** The share of the time a worker's main thread (its event loop) was on a CPU, the mean over the workers. */
  readonly workerMainThread: number
  /** The share of the time it was runnable but waiting for a CPU (the machine's cores were taken). With the above near 1, the CPU binds. */
  readonly workerMainThreadWaiting: number
}

const cpuBetween = (series: ReadonlyArray<CpuSample>, fromMs: number, toMs: number, processes: number): CpuWindow | undefined => {
  const first = series.findLast((c) => c.atMs <= fromMs) ?? series[0]
  const last = series.find((c) => c.atMs >= toMs) ?? series.at(-1)
  if (first === undefined || last === undefined || last.atMs <= first.atMs) return undefined
  const seconds = (last.atMs - first.atMs) / 1000
  return {
    seconds,
    machine: (last.machine.busy - first.machine.busy) / Math.max(1, last.machine.total - first.machine.total),
    workers: (last.workersCpuSeconds - first.workersCpuSeconds) / seconds,
    workerMainThread: (last.mainThreads.onCpuSeconds - first.mainThreads.onCpuSeconds) / seconds / Math.max(1, processes),
    workerMainThreadWaiting: (last.mainThreads.waitingSeconds - first.mainThreads.waitingSeconds) / seconds / Math.max(1, processes)
  }
}

/** Half, 90% and all of a run's accounts, in seconds. */
export interface Spread {
  readonly p50: number
  readonly p90: number
  readonly max: number
}

/**
 * When a run's accounts started, after the first: claimed (pg-boss's started_on of the account's first job) and their
 * first stream's run begun (sync_runs), and how long each account took from that beginning to its last stream's end.
 * An account not begun yet has a full bucket that restores nothing: the run's ceiling counts every account from the
 * run's start.
 */
export interface StartSpread {
  readonly claimed: Spread
  readonly began: Spread
  readonly accountSeconds: Spread
  /** While the accounts began (from the first one's beginning to the last one's): the CPU, see CpuWindow. */
  readonly cpuWhileBeginning?: CpuWindow
}

const spreadOf = (column: string) =>
  `json_build_object('p50', percentile_cont(0.5) WITHIN GROUP (ORDER BY ${column}), 'p90', percentile_cont(0.9) WITHIN GROUP (ORDER BY ${column}), 'max', max(${column}))`

export const startSpread = (queueSchema: string, cpu: (fromMs: number, toMs: number) => CpuWindow | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.orDie(sql<{ claimed: Spread | null; began: Spread | null; account_seconds: Spread | null; first_began_ms: number | null; last_began_ms: number | null }>`
        WITH claims AS (SELECT min(started_on) AS at FROM ${sql(queueSchema)}.job
            WHERE name = 'account-work' AND data->>'kind' = 'sync' AND started_on IS NOT NULL GROUP BY data->>'accountId'),
          claimed AS (SELECT extract(epoch FROM at - min(at) OVER ())::float8 AS after FROM claims),
          accounts AS (SELECT min(started_at) AS began, max(finished_at) AS ended FROM sync_runs GROUP BY account_id),
          began AS (SELECT extract(epoch FROM began - min(began) OVER ())::float8 AS after, extract(epoch FROM ended - began)::float8 AS took FROM accounts)
        SELECT (SELECT ${sql.literal(spreadOf("after"))} FROM claimed) AS claimed, (SELECT ${sql.literal(spreadOf("after"))} FROM began) AS began,
          (SELECT ${sql.literal(spreadOf("took"))} FROM began) AS account_seconds,
          (SELECT extract(epoch FROM min(began))::float8 * 1000 FROM accounts) AS first_began_ms, (SELECT extract(epoch FROM max(began))::float8 * 1000 FROM accounts) AS last_began_ms`),
      (r): StartSpread => {
        const none: Spread = { p50: 0, p90: 0, max: 0 }
        const from = r[0]?.first_began_ms
        const to = r[0]?.last_began_ms
        const window = from != null && to != null ? cpu(from, to) : undefined
        return { claimed: r[0]?.claimed ?? none, began: r[0]?.began ?? none, accountSeconds: r[0]?.account_seconds ?? none, ...(window ? { cpuWhileBeginning: window } : {}) }
      }
    )
  )

const describeSpread = (s: Spread) => `${s.p50.toFixed(1)} / ${s.p90.toFixed(1)} / ${s.max.toFixed(1)} s`

export const describeStartSpread = (s: StartSpread) =>
  `accounts (half / 90% / all) claimed within ${describeSpread(s.claimed)}, begun within ${describeSpread(s.began)}, each taking ${describeSpread(s.accountSeconds)}` +
  (s.cpuWhileBeginning
    ? `; while they began (${s.cpuWhileBeginning.seconds.toFixed(1)} s): machine CPU ${s.cpuWhileBeginning.machine.toFixed(2)}, workers ${s.cpuWhileBeginning.workers.toFixed(2)} cores, a worker's main thread on a CPU ${s.cpuWhileBeginning.workerMainThread.toFixed(2)} and waiting for one ${s.cpuWhileBeginning.workerMainThreadWaiting.toFixed(2)}`
    : "")

export const describeShares = (s: BoundShares) =>
  `CPU: workers ${s.workersCpu.toFixed(2)}, machine ${s.machineCpu.toFixed(2)}, emulator ${s.emulatorCpu.toFixed(2)}; ` +
  `permits full ${s.permitsFull.toFixed(2)}; accounts' time: bucket ${s.bucketWait.toFixed(2)}, permit ${s.permitWait.toFixed(2)}, queue ${s.queueWait.toFixed(2)}, Postgres ${s.postgres.toFixed(2)}`

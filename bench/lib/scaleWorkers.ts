import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import type { DatabaseTopology } from "../../src/db/Database.js"
import type { Limits } from "../../src/emulator/EmulatorAdmin.js"
import { JobQueueLive } from "../../src/jobs/JobQueue.js"
import { JobSettings } from "../../src/jobs/JobSettings.js"
import { newAccount } from "./benchAccounts.js"
import { childEnv, connectAccount, connectorLayer, type Env, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { binPath, nodeArgs, nodeEnv, type EmulatorProcess } from "./emulatorProcess.js"

/** What the scale bench's parts share: worker processes, their accounts in a schema of their own, the queue, waits. */
export const say = (line: string) => Effect.sync(() => process.stderr.write(`bench: scale: ${line}\n`))

/** Settings every worker of the bench runs with: a schedule that never fires on its own (the workers tick at start). */
export const queueEnv: Env = {
  QUEUE_POLL_INTERVAL: "500 millis",
  QUEUE_MONITOR_SECONDS: "2",
  QUEUE_RETRY_DELAY_SECONDS: "1",
  QUEUE_SCHEDULE: "0 0 1 1 *",
  QUEUE_BACKFILLS_AT_ONCE: "1000",
  SYNC_INCREMENTAL_EVERY: "1 hour",
  LOG_LEVEL: "warn",
  LOG_FORMAT: "json"
}

export interface WorkerProcess {
  readonly pid: number
  /** CPU seconds so far and peak RSS (VmHWM), read from /proc while it runs. */
  readonly sample: () => { readonly cpuSeconds: number; readonly peakRssMb: number }
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Its stderr's last 4,000 characters. */
  readonly tail: () => string
}

const ticks = 100
/**
 * A process's main thread (its event loop: JavaScript runs there), from the scheduler (`/proc/<pid>/task/<pid>/schedstat`):
 * seconds on a CPU, and seconds runnable but waiting for one; 0 once it is gone.
 */
export const mainThreadSchedule = (pid: number) => {
  try {
    const [onCpu, waiting] = fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(/\s+/).map(Number)
    return { onCpuSeconds: (onCpu ?? 0) / 1e9, waitingSeconds: (waiting ?? 0) / 1e9 }
  } catch {
    return { onCpuSeconds: 0, waitingSeconds: 0 }
  }
}

export const procSample = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / ticks
    const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return { cpuSeconds, peakRssMb: hwm ? Number(hwm[1]) / 1024 : 0 }
  } catch {
    return { cpuSeconds: 0, peakRssMb: 0 }
  }
}

/** A `worker` child; killed (SIGKILL) with the scope if still running. */
export const startWorker = (env: Env, concurrency: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [...nodeArgs, binPath, "worker", "--concurrency", String(concurrency)], { env: { ...process.env, ...nodeEnv, ...env }, stdio: ["ignore", "ignore", "pipe"] })
      let tail = ""
      child.stderr!.on("data", (c: Buffer) => void (tail = (tail + c.toString()).slice(-4000)))
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const process_: WorkerProcess = {
        pid: child.pid!,
        sample: () => procSample(child.pid!),
        kill: (signal) => Effect.promise(() => (child.exitCode === null && child.signalCode === null ? (child.kill(signal), exited) : Promise.resolve())),
        tail: () => tail
      }
      return { process_, child, tail: () => tail }
    }),
    ({ child }) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
  ).pipe(Effect.map((w) => w.process_))

export const count = (query: Effect.Effect<ReadonlyArray<{ n: number }>, unknown, SqlClient.SqlClient>) => Effect.map(Effect.orDie(query), (r) => r[0]?.n ?? 0)

/** Polls `check` until it holds; past `seconds`, fails naming `what` and what `detail` then says (the state it met). */
export const waitFor = (what: string, seconds: number, check: Effect.Effect<boolean, never, SqlClient.SqlClient>, detail?: Effect.Effect<string, never, SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const started = performance.now()
    while (!(yield* check)) {
      if (performance.now() - started > seconds * 1000) {
        const met = detail === undefined ? "" : ` (${yield* detail})`
        return yield* new BenchError({ step: "scale", reason: `not within ${seconds} s: ${what}${met}` })
      }
      yield* Effect.sleep("200 millis")
    }
  })

/** The runs' outcomes by account, as `waitFor`'s detail. */
export const runsByAccount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ account_id: string; outcomes: string }>`
    SELECT account_id, string_agg(outcome || ' ' || stream, ', ' ORDER BY id) AS outcomes FROM sync_runs GROUP BY account_id`.pipe(
    Effect.map((rows) => (rows.length === 0 ? "no run recorded" : rows.map((r) => `${r.account_id.slice(-8)}: ${r.outcomes}`).join("; "))),
    Effect.orElseSucceed(() => "sync_runs unread")
  )
)

/**
 * The queue drained with every account's sync done: at least `accounts` accounts with a job completed and none
 * waiting, running or to be retried (a run whose closing write failed may stay 'running' in sync_runs).
 */
export const drained = (sql: SqlClient.SqlClient, queueSchema: string, accounts: number) =>
  sql<{ open: number; done: number }>`
      SELECT count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open,
        count(DISTINCT singleton_key) FILTER (WHERE state = 'completed')::int AS done
      FROM ${sql(queueSchema)}.job WHERE name = 'account-work' AND data->>'kind' = 'sync'`.pipe(
    Effect.map((r) => r[0]!.open === 0 && r[0]!.done >= accounts),
    // the workers have not set the queue up yet
    Effect.orElseSucceed(() => false)
  )

/** Pairs of runs of one account whose intervals overlap. */
export const overlappingRuns = (sql: SqlClient.SqlClient) =>
  count(sql<{ n: number }>`
    SELECT count(*)::int AS n FROM sync_runs a JOIN sync_runs b ON a.account_id = b.account_id AND a.id < b.id
    WHERE a.outcome <> 'skipped' AND b.outcome <> 'skipped'
      AND b.started_at < COALESCE(a.finished_at, now()) AND a.started_at < COALESCE(b.finished_at, now())`)

export const queueOf = (env: Env) =>
  JobQueueLive({ supervise: false, instanceName: "bench" }).pipe(
    Layer.provide(JobSettings.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

/** A schema of its own with `accounts` new accounts of `jobs` jobs under `limits`, connected; `body` gets the workers' environment. */
export const withAccounts = <A>(
  emulator: EmulatorProcess,
  options: { readonly accounts: number; readonly jobs: number; readonly limits: Limits; readonly poolSize: number },
  body: (env: Env, ids: ReadonlyArray<string>) => Effect.Effect<A, unknown, SqlClient.SqlClient | DatabaseTopology>
) =>
  Effect.gen(function* () {
    const schema = freshSchemaName("scale")
    const settings = settingsFor(emulator)
    const ids = yield* Effect.forEach(Array.from({ length: options.accounts }), () => newAccount(emulator, options.jobs, options.limits), { concurrency: 8 })
    const env: Env = { ...childEnv(settings, benchDatabaseUrl(), schema), ...queueEnv, DATABASE_POOL_SIZE: String(options.poolSize) }
    return yield* Effect.gen(function* () {
      const t0 = performance.now()
      yield* Effect.forEach(ids, connectAccount, { concurrency: 8, discard: true })
      yield* say(`${ids.length} accounts connected in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      return yield* body(env, ids)
    }).pipe(
      Effect.scoped,
      Effect.provide(connectorLayer({ settings, schema, concurrency: 8 })),
      Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "scale", reason: String((e as { message?: string })?.message ?? e) })))
    )
  })

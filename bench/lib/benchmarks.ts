import { SqlClient } from "@effect/sql"
import { Effect, type Layer, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { estimateQueryCost } from "../../src/api/costEstimate.js"
import type { CostBudget } from "../../src/api/CostBudget.js"
import type { Limits } from "../../src/emulator/EmulatorAdmin.js"
import { AccessTokens } from "../../src/auth/AccessTokens.js"
import { pageBatches, Pager } from "../../src/sync/paging/Pager.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"
import { type AccountReport, SyncRunner } from "../../src/run/SyncRunner.js"
import { CostMeter, meteredCostBudget, reactiveCostBudget } from "./budgets.js"
import { type BucketLoss, bucketLoss } from "./bucketLoss.js"
import { childEnv, connectAccount, connectorLayer, type Env, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { postgresCpu, postgresCpuSince, processCpuSeconds } from "./machine.js"
import { runConnectorChild } from "./processes.js"

const jobsStream = jobScalarsStream

/** Cost the service requests for one full page of the jobs stream (`first: 100`), computed as the service does. */
export const fullPageCost = (first = jobsStream.maxPageSize) =>
  estimateQueryCost(jobsStream.document, { ...jobsStream.fullPass, first, after: null })

/** Limits no benchmark can reach: the emulator never throttles and never rate-limits. */
export const unlimited: Limits = { maxPoints: 1e12, restoreRate: 1e12, requestLimit: 1e9 }

const JOB_SEED = 4242

/**
 * SyncRunner's advisory lock is keyed by account id alone (database-wide, whatever the schema), and every emulator
 * numbers its accounts from 1001: random ids keep a benchmark from being "skipped" because a test elsewhere on the
 * same Postgres holds the lock of its own account 1001.
 */
export const uniqueAccountId = () => Buffer.from(`gid://service/Account/${crypto.randomInt(1_000_000, 2 ** 47)}`).toString("base64")

/** A new account of the emulator child (its own bucket), `jobs` deterministic jobs, and its limits. */
export const newAccount = (emulator: EmulatorProcess, jobs: number, limits: Limits) =>
  Effect.gen(function* () {
    const account = yield* emulator.admin.createAccount({ accountId: uniqueAccountId(), jobs, seed: JOB_SEED })
    yield* emulator.admin.setLimits({ ...limits, clientId: emulator.clientId, accountId: account.accountId })
    return account.accountId
  })

export interface TimedRun {
  readonly wallMs: number
  readonly cpuMs: number
  readonly rows: number
  /** CPU seconds of every Postgres process over the run (its backends, writers and checkpointer). */
  readonly postgresCpuSec: number
}

/** Connects every account through the real OAuth flow, then one timed `backfill` of them all. */
export const connectAndBackfill = (accountIds: ReadonlyArray<string>, concurrency: number, beforeRun: Effect.Effect<void, unknown> = Effect.void) =>
  Effect.gen(function* () {
    yield* Effect.forEach(accountIds, connectAccount, { concurrency: 8, discard: true })
    yield* beforeRun
    const runner = yield* SyncRunner
    const postgres0 = postgresCpu()
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const reports = yield* runner.run({ mode: "backfill", accounts: accountIds, concurrency })
    const wallMs = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const postgresCpuSec = postgresCpuSince(postgres0)
    const bad = reports.filter((r) => r.outcome !== "synced")
    if (bad.length > 0) {
      return yield* new BenchError({ step: "backfill", reason: `${bad.length} account(s) not synced, e.g. ${bad[0]!.accountId}: ${bad[0]!.outcome} ${bad[0]!.message ?? ""}` })
    }
    const rows = reports.reduce((n, r) => n + r.streams.reduce((m, s) => m + s.counts.rows, 0), 0)
    return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, rows, postgresCpuSec } satisfies TimedRun
  })

const inConnector = <A, E>(
  emulator: EmulatorProcess,
  options: { readonly budget?: Layer.Layer<CostBudget>; readonly concurrency?: number; readonly settings?: Env },
  body: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof connectorLayer>>>
) => {
  const schema = freshSchemaName("bench")
  const { settings, ...rest } = options
  return body.pipe(
    Effect.scoped,
    Effect.provide(connectorLayer({ settings: { ...settingsFor(emulator), ...settings }, schema, ...rest })),
    Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "connector", reason: String((e as { message?: string })?.message ?? e) })))
  )
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Landing: unthrottled backfill rows/s vs COPY of the same rows into an identical table

export interface LandingResult {
  readonly jobs: number
  readonly seconds: number
  readonly rowsPerSec: number
  /** The median of `copyRuns` COPY imports of the same rows (the table emptied between them). */
  readonly copySeconds: number
  readonly copyRowsPerSec: number
  readonly copyRunsSeconds: ReadonlyArray<number>
  readonly copyRatio: number
  readonly cpuSecPer10k: number
  /** CPU seconds per 10,000 rows of Postgres (every server process) and of the emulator child over the landing. */
  readonly postgresCpuSecPer10k: number
  readonly emulatorCpuSecPer10k: number
  /**
   * The fetching half alone, for the same number of jobs of a second account: the connector's Pager (HTTP, decode,
   * every node checked, the walk) drained as the landing takes its pages, landed nowhere. What the landing cannot beat
   * on this machine when it shares the cores with it.
   */
  readonly fetchOnly: { readonly rowsPerSec: number; readonly copyRatio: number; readonly cpuSecPer10k: number; readonly emulatorCpuSecPer10k: number }
}

const psql = (args: ReadonlyArray<string>) => execFileSync("psql", [benchDatabaseUrl(), "-X", "-q", "-v", "ON_ERROR_STOP=1", ...args], { stdio: ["ignore", "pipe", "pipe"] })

/** COPY imports per landing figure: one import's time moved 40-60k rows/s here with Postgres's own background work. */
const copyRuns = 3

/**
 * `\copy` of the landed rows into `jobs_copy (LIKE jobs INCLUDING ALL)`: same columns, key, index and defaults;
 * `copyRuns` times into the emptied table, each time returned.
 */
export const copyBaseline = (accountId: string, expectedRows: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const schema = (yield* sql<{ s: string }>`SELECT current_schema() AS s`)[0]!.s
    const file = path.join(os.tmpdir(), `bench-copy-${process.pid}-${Date.now()}.csv`)
    yield* sql.unsafe(`CREATE TABLE ${schema}.jobs_copy (LIKE ${schema}.jobs INCLUDING ALL)`)
    try {
      yield* Effect.try({
        try: () => psql(["-c", `\\copy (SELECT * FROM ${schema}.jobs WHERE account_id = '${accountId}') TO '${file}' WITH (FORMAT csv)`]),
        catch: (e) => new BenchError({ step: "COPY export", reason: String(e) })
      })
      // psql's own start and connection time, measured and taken off
      const t0 = performance.now()
      yield* Effect.try({ try: () => psql(["-c", "SELECT 1"]), catch: (e) => new BenchError({ step: "psql", reason: String(e) }) })
      const overheadMs = performance.now() - t0
      const runsMs: Array<number> = []
      for (let run = 0; run < copyRuns; run++) {
        if (run > 0) yield* sql.unsafe(`TRUNCATE ${schema}.jobs_copy`)
        const t1 = performance.now()
        yield* Effect.try({
          try: () => psql(["-c", `\\copy ${schema}.jobs_copy FROM '${file}' WITH (FORMAT csv)`]),
          catch: (e) => new BenchError({ step: "COPY import", reason: String(e) })
        })
        runsMs.push(Math.max(1, performance.now() - t1 - overheadMs))
        const n = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs_copy`)[0]!.n
        if (n !== expectedRows) return yield* new BenchError({ step: "COPY", reason: `copied ${n} rows, expected ${expectedRows}` })
      }
      return runsMs
    } finally {
      fs.rmSync(file, { force: true })
    }
  })

/** One full pass of the jobs of `accountId` fetched and checked by the Pager, its pages drained without landing. */
const fetchOnlyRun = (emulator: EmulatorProcess, accountId: string) =>
  Effect.gen(function* () {
    yield* connectAccount(accountId)
    const tokens = yield* AccessTokens
    const pager = yield* Pager
    const emulator0 = processCpuSeconds(emulator.pid)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const pages = pager.pages({ credentials: tokens.credentials(accountId), stream: jobsStream, variables: jobsStream.fullPass })
    const rows = yield* pageBatches(pages, { prefetch: true }).pipe(Stream.runFold(0, (n, batch) => n + batch.reduce((m, p) => m + p.nodes.length - p.newFrom, 0)))
    const wallMs = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    return { rows, wallMs, cpuSec: (cpu.user + cpu.system) / 1e6, emulatorCpuSec: processCpuSeconds(emulator.pid) - emulator0 }
  })

export const landingBench = (emulator: EmulatorProcess, jobs: number) =>
  Effect.gen(function* () {
    const accountId = yield* newAccount(emulator, jobs, unlimited)
    const fetchAccountId = yield* newAccount(emulator, jobs, unlimited)
    return yield* inConnector(
      emulator,
      { concurrency: 1 },
      Effect.gen(function* () {
        const emulator0 = processCpuSeconds(emulator.pid)
        const run = yield* connectAndBackfill([accountId], 1)
        const emulatorCpuSec = processCpuSeconds(emulator.pid) - emulator0
        if (run.rows !== jobs) return yield* new BenchError({ step: "landing", reason: `landed ${run.rows} rows, expected ${jobs}` })
        const copyRunsMs = yield* copyBaseline(accountId, jobs)
        const copyMs = [...copyRunsMs].sort((a, b) => a - b)[Math.floor(copyRunsMs.length / 2)]!
        const rowsPerSec = (run.rows * 1000) / run.wallMs
        const copyRowsPerSec = (jobs * 1000) / copyMs
        const fetched = yield* fetchOnlyRun(emulator, fetchAccountId)
        if (fetched.rows !== jobs) return yield* new BenchError({ step: "landing", reason: `fetched ${fetched.rows} rows, expected ${jobs}` })
        return {
          jobs,
          seconds: run.wallMs / 1000,
          rowsPerSec,
          copySeconds: copyMs / 1000,
          copyRowsPerSec,
          copyRunsSeconds: copyRunsMs.map((ms) => ms / 1000),
          copyRatio: rowsPerSec / copyRowsPerSec,
          cpuSecPer10k: (run.cpuMs / 1000) * (10_000 / run.rows),
          postgresCpuSecPer10k: run.postgresCpuSec * (10_000 / run.rows),
          emulatorCpuSecPer10k: emulatorCpuSec * (10_000 / run.rows),
          fetchOnly: {
            rowsPerSec: (fetched.rows * 1000) / fetched.wallMs,
            copyRatio: (fetched.rows * 1000) / fetched.wallMs / copyRowsPerSec,
            cpuSecPer10k: fetched.cpuSec * (10_000 / fetched.rows),
            emulatorCpuSecPer10k: fetched.emulatorCpuSec * (10_000 / fetched.rows)
          }
        } satisfies LandingResult
      })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// History: what SYNC_HISTORY costs the landing (the same backfill with it off and on) and the warehouse

export interface HistoryResult {
  readonly jobs: number
  /** Each backfill's rows/s, in the order run (off, on, off, on: alternated, so drift hits both alike). */
  readonly runs: ReadonlyArray<{ readonly history: boolean; readonly rowsPerSec: number }>
  readonly rowsPerSecondWithout: number
  readonly rowsPerSecondWith: number
  readonly ratio: number
  /** jobs_history's size (table, TOAST and indexes) per version it holds (the bench's jobs carry no line items). */
  readonly bytesPerVersion: number
  readonly versions: number
}

/**
 * Two backfills of `jobs` jobs with history off and two with SYNC_HISTORY=jobs, alternated, each into a fresh
 * schema: rows/s of each (the mean of its two), and the bytes each version takes in the history tables.
 */
export const historyBench = (emulator: EmulatorProcess, jobs: number) =>
  Effect.gen(function* () {
    const accountId = yield* newAccount(emulator, jobs, unlimited)
    const runs: Array<{ history: boolean; rowsPerSec: number }> = []
    let sizes = { bytesPerVersion: 0, versions: 0 }
    for (const history of [false, true, false, true]) {
      const measured = yield* inConnector(
        emulator,
        { concurrency: 1, settings: { SYNC_STREAMS: "jobs", SYNC_HISTORY: history ? "jobs" : "" } },
        Effect.gen(function* () {
          const run = yield* connectAndBackfill([accountId], 1)
          if (run.rows !== jobs) return yield* new BenchError({ step: "history", reason: `landed ${run.rows} rows, expected ${jobs}` })
          if (!history) return { rowsPerSec: (run.rows * 1000) / run.wallMs, sizes: undefined }
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ versions: number; bytes: string }>`
            SELECT (SELECT count(*)::int FROM jobs_history) AS versions, pg_total_relation_size('jobs_history')::text AS bytes`
          if (row!.versions !== jobs) return yield* new BenchError({ step: "history", reason: `${row!.versions} versions for ${jobs} jobs` })
          return {
            rowsPerSec: (run.rows * 1000) / run.wallMs,
            sizes: { versions: row!.versions, bytesPerVersion: Number(row!.bytes) / row!.versions }
          }
        })
      )
      runs.push({ history, rowsPerSec: measured.rowsPerSec })
      if (measured.sizes) sizes = measured.sizes
    }
    const mean = (history: boolean) => {
      const of = runs.filter((r) => r.history === history).map((r) => r.rowsPerSec)
      return of.reduce((a, b) => a + b, 0) / of.length
    }
    const rowsPerSecondWithout = mean(false)
    const rowsPerSecondWith = mean(true)
    return { jobs, runs, rowsPerSecondWithout, rowsPerSecondWith, ratio: rowsPerSecondWith / rowsPerSecondWithout, ...sizes } satisfies HistoryResult
  })

// ---------------------------------------------------------------------------------------------------------------
// Exactness: what being exact costs a full pass over an unchanging account (overlap rows, end-of-pass checks)

export interface ExactnessPass {
  /** Points the pass's pages would have cost without being exact (every row read once, no checks). */
  readonly plainPoints: number
  /** Points spent on rows read again to join pages, pages asked again, the count and the sweep's checks. */
  readonly overheadPoints: number
  readonly overheadRatio: number
}

export interface ExactnessResult extends ExactnessPass {
  readonly jobs: number
  /** The first full pass (a backfill into an empty warehouse: no sweep to check). */
  readonly backfill: ExactnessPass
}

const passCost = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [run] = yield* sql<{ cost: string; overhead: string }>`
      SELECT cost_points::text AS cost, overhead_points::text AS overhead FROM sync_runs
      WHERE account_id = ${accountId} AND kind = 'full' AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1`
    if (run === undefined) return yield* new BenchError({ step: "exactness", reason: "no succeeded full pass recorded" })
    const overheadPoints = Number(run.overhead)
    const plainPoints = Number(run.cost) - overheadPoints
    return { plainPoints, overheadPoints, overheadRatio: overheadPoints / plainPoints } satisfies ExactnessPass
  })

/**
 * A backfill of `jobs` jobs, then a second full pass over the landed account (`backfill --restart`: its sweep checks
 * the rows it did not see): the points of each on being exact, as sync_runs records them.
 */
export const exactnessBench = (emulator: EmulatorProcess, jobs: number) =>
  Effect.gen(function* () {
    const accountId = yield* newAccount(emulator, jobs, unlimited)
    return yield* inConnector(
      emulator,
      { concurrency: 1 },
      Effect.gen(function* () {
        yield* connectAndBackfill([accountId], 1)
        const backfill = yield* passCost(accountId)
        const [again] = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [accountId], restart: true })
        if (again?.outcome !== "synced") return yield* new BenchError({ step: "exactness", reason: `second full pass: ${again?.outcome} ${again?.message ?? ""}` })
        return { jobs, ...(yield* passCost(accountId)), backfill } satisfies ExactnessResult
      })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// 1. Budget: one account, a bucket that binds; our CostBudget vs the reactive strategy, each on a fresh bucket

export interface BudgetSide {
  readonly seconds: number
  readonly floorSec: number
  readonly efficiency: number
  readonly throttled: number
  readonly requestedPoints: number
}

export interface BudgetResult extends BudgetSide {
  readonly jobs: number
  readonly maxPoints: number
  readonly restoreRate: number
  readonly pageCost: number
  readonly speedupVsReactive: number
  readonly reactive: BudgetSide
}

const budgetSide = (emulator: EmulatorProcess, jobs: number, limits: Required<Pick<Limits, "maxPoints" | "restoreRate">>, reactive: boolean) =>
  Effect.gen(function* () {
    const accountId = yield* newAccount(emulator, jobs, { ...limits, requestLimit: 1e9 })
    const meter = new CostMeter()
    const budget = reactive ? reactiveCostBudget(meter) : meteredCostBudget(meter)
    return yield* inConnector(
      emulator,
      { budget, concurrency: 1 },
      Effect.gen(function* () {
        let throttledBefore = 0
        const run = yield* connectAndBackfill(
          [accountId],
          1,
          Effect.gen(function* () {
            // the connect flow's account query is not part of the run; let the bucket refill after it
            yield* Effect.sleep(Math.ceil((10 * 1000) / limits.restoreRate) + 50)
            meter.reset()
            throttledBefore = (yield* emulator.admin.stats()).throttled
          })
        )
        if (run.rows !== jobs) return yield* new BenchError({ step: "budget", reason: `landed ${run.rows} rows, expected ${jobs}` })
        const throttled = (yield* emulator.admin.stats()).throttled - throttledBefore
        const floorSec = Math.max(0, meter.requested - limits.maxPoints) / limits.restoreRate
        const seconds = run.wallMs / 1000
        return { seconds, floorSec, efficiency: floorSec / seconds, throttled, requestedPoints: meter.requested } satisfies BudgetSide
      })
    )
  })

/** The engine's own time for a backfill of `jobs` jobs with a bucket that never binds. */
export const unthrottledBackfillSeconds = (emulator: EmulatorProcess, jobs: number) =>
  Effect.map(budgetSide(emulator, jobs, { maxPoints: 1e12, restoreRate: 1e12 }, false), (side) => side.seconds)

/**
 * `restoreRate` makes the bucket bind: the floor is `floorSec` (chosen by the caller: 30 s, or 1.5 x the unthrottled
 * landing time when that is longer, so that the bucket, not the engine, is what limits the run).
 */
export const budgetBench = (emulator: EmulatorProcess, options: { readonly jobs: number; readonly maxPoints?: number; readonly floorSec: number }) =>
  Effect.gen(function* () {
    const maxPoints = options.maxPoints ?? 10_000
    const pageCost = fullPageCost()
    const pages = Math.ceil(options.jobs / jobsStream.maxPageSize)
    const restoreRate = Math.max(1, Math.round((pages * pageCost - maxPoints) / options.floorSec))
    const limits = { maxPoints, restoreRate }
    const ours = yield* budgetSide(emulator, options.jobs, limits, false)
    const reactive = yield* budgetSide(emulator, options.jobs, limits, true)
    return { ...ours, jobs: options.jobs, maxPoints, restoreRate, pageCost, speedupVsReactive: reactive.seconds / ours.seconds, reactive } satisfies BudgetResult
  })

// ---------------------------------------------------------------------------------------------------------------
// 3. Memory: peak RSS of a child `backfill` process

export interface MemoryRun {
  readonly jobs: number
  readonly peakRssMb: number
  readonly seconds: number
  /** CPU seconds of the backfill process (user, system), per 10,000 rows. */
  readonly userSecPer10k?: number
  readonly systemSecPer10k?: number
}

export const memoryRun = (emulator: EmulatorProcess, jobs: number) =>
  Effect.gen(function* () {
    const accountId = yield* newAccount(emulator, jobs, unlimited)
    const settings = settingsFor(emulator)
    const schema = freshSchemaName("benchmem")
    return yield* Effect.gen(function* () {
      yield* connectAccount(accountId)
      const result = yield* runConnectorChild(["backfill", "--account", accountId], childEnv(settings, benchDatabaseUrl(), schema), { measureRss: true })
      if (result.code !== 0) {
        return yield* new BenchError({ step: `memory backfill of ${jobs} jobs`, reason: `exit ${result.code ?? result.signal}: ${result.stderrTail.slice(-800)}` })
      }
      const sql = yield* SqlClient.SqlClient
      const n = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`)[0]!.n
      if (n !== jobs) return yield* new BenchError({ step: "memory", reason: `the child landed ${n} rows, expected ${jobs}` })
      if (result.peakRssMb === undefined) return yield* new BenchError({ step: "memory", reason: "/usr/bin/time -v gave no maximum resident set size" })
      const per10k = (sec: number) => (sec * 10_000) / jobs
      return {
        jobs,
        peakRssMb: result.peakRssMb,
        seconds: result.wallMs / 1000,
        ...(result.cpu ? { userSecPer10k: per10k(result.cpu.userSec), systemSecPer10k: per10k(result.cpu.systemSec) } : {})
      } satisfies MemoryRun
    }).pipe(
      Effect.scoped,
      Effect.provide(connectorLayer({ settings, schema })),
      Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "memory", reason: String((e as { message?: string })?.message ?? e) })))
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// 4. Many accounts, each with its own binding bucket

export interface AccountsRun {
  readonly concurrency: number
  readonly accounts: number
  readonly jobsPerAccount: number
  readonly seconds: number
  readonly rowsPerSec: number
  readonly ceilingRowsPerSec: number
  readonly ratioToCeiling: number
  /** Against the ceiling of the accounts that can run at once (min(concurrency, accounts) buckets). */
  readonly ratioToRunningCeiling: number
  readonly restoreRate: number
}

export const accountsRun = (
  emulator: EmulatorProcess,
  options: { readonly accounts: number; readonly jobsPerAccount: number; readonly concurrency: number; readonly restoreRate: number }
) =>
  Effect.gen(function* () {
    const limits = { maxPoints: 10_000, restoreRate: options.restoreRate }
    const ids = yield* Effect.forEach(Array.from({ length: options.accounts }), () => newAccount(emulator, options.jobsPerAccount, limits), {
      concurrency: 8
    })
    return yield* inConnector(
      emulator,
      { concurrency: options.concurrency },
      Effect.gen(function* () {
        const run = yield* connectAndBackfill(ids, options.concurrency, Effect.sleep(Math.ceil((10 * 1000) / options.restoreRate) + 50))
        const expected = options.accounts * options.jobsPerAccount
        if (run.rows !== expected) return yield* new BenchError({ step: "accounts", reason: `landed ${run.rows} rows, expected ${expected}` })
        const rowsPerSec = (run.rows * 1000) / run.wallMs
        const perAccount = options.restoreRate / (fullPageCost() / jobsStream.maxPageSize)
        const ceiling = options.accounts * perAccount
        return {
          concurrency: options.concurrency,
          accounts: options.accounts,
          jobsPerAccount: options.jobsPerAccount,
          seconds: run.wallMs / 1000,
          rowsPerSec,
          ceilingRowsPerSec: ceiling,
          ratioToCeiling: rowsPerSec / ceiling,
          ratioToRunningCeiling: rowsPerSec / (Math.min(options.concurrency, options.accounts) * perAccount),
          restoreRate: options.restoreRate
        } satisfies AccountsRun
      })
    )
  })


// ---------------------------------------------------------------------------------------------------------------
// 5. The whole account: every stream (links, line items, custom fields) of one account against a bucket that binds

export interface WholeAccountResult {
  readonly jobs: number
  readonly seconds: number
  /** (points spent - maximumAvailable) / restoreRate: no connector can finish sooner. */
  readonly floorSec: number
  readonly efficiency: number
  readonly throttled: number
  readonly maxPoints: number
  readonly restoreRate: number
  /** Sum of `actualQueryCost` of the answered queries (what the bucket was charged), every stream. */
  readonly points: number
  /** Sum of `requestedQueryCost` (what had to be in the bucket before each query). */
  readonly requestedPoints: number
  /** The same backfill unthrottled: the bucket, not the engine, must be what binds. */
  readonly unthrottledSec: number
  readonly rows: number
  readonly streams: ReadonlyArray<string>
  /** Points spent per landed row (a parent row: its line items and custom fields ride in it), per stream. */
  readonly pointsPerRow: Readonly<Record<string, number>>
  /** Where the seconds beyond the floor went (bucketLoss.ts). */
  readonly loss: BucketLoss
}

/** Every stream, with every field: the jobs-only settings cleared. */
const wholeAccountSettings: Env = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }

const WHOLE_ACCOUNT_SEED = 2424

/** One metered whole-account backfill of a new account with these limits: its reports, time and what it was charged. */
const wholeAccountRun = (emulator: EmulatorProcess, jobs: number, limits: Limits) =>
  Effect.gen(function* () {
    const account = yield* emulator.admin.createAccount({ accountId: uniqueAccountId(), jobs, seed: WHOLE_ACCOUNT_SEED })
    yield* emulator.admin.setLimits({ ...limits, clientId: emulator.clientId, accountId: account.accountId })
    const meter = new CostMeter()
    return yield* inConnector(
      emulator,
      { budget: meteredCostBudget(meter), concurrency: 1, settings: wholeAccountSettings },
      Effect.gen(function* () {
        yield* connectAccount(account.accountId)
        // the connect flow's account query is not part of the run; let the bucket refill after it
        if (limits.restoreRate !== undefined) yield* Effect.sleep(Math.ceil((10 * 1000) / limits.restoreRate) + 50)
        meter.reset()
        const throttledBefore = (yield* emulator.admin.stats()).throttled
        const t0 = performance.now()
        const reports = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [account.accountId], concurrency: 1 })
        const wallMs = performance.now() - t0
        const report: AccountReport | undefined = reports[0]
        if (report?.outcome !== "synced") {
          return yield* new BenchError({ step: "whole account", reason: `backfill of ${account.accountId}: ${report?.outcome} ${report?.message ?? ""}` })
        }
        const loss = bucketLoss(meter, t0, t0 + wallMs)
        const throttled = (yield* emulator.admin.stats()).throttled - throttledBefore
        return { report, wallMs, throttled, actual: meter.actual, requested: meter.requested, loss }
      })
    )
  })

/**
 * A whole-account backfill of `jobs` jobs (the other collections scale with them) unthrottled, to learn its points
 * and the engine's own time; then the same data in a new account whose bucket (`maxPoints`, restore rate chosen for
 * a floor of `floorSec` (40 s), or of 1.5 x the unthrottled time when longer) is what limits the run.
 */
export const wholeAccountBench = (emulator: EmulatorProcess, options: { readonly jobs: number; readonly maxPoints: number; readonly floorSec?: number }) =>
  Effect.gen(function* () {
    const free = yield* wholeAccountRun(emulator, options.jobs, unlimited)
    const unthrottledSec = free.wallMs / 1000
    // the bucket, not the engine, must bind: never less than 1.5 x the engine's own time
    const floorTarget = Math.max(options.floorSec ?? 40, Math.ceil(1.5 * unthrottledSec))
    const restoreRate = Math.max(1, Math.round((free.actual - options.maxPoints) / floorTarget))
    const run = yield* wholeAccountRun(emulator, options.jobs, { maxPoints: options.maxPoints, restoreRate, requestLimit: 1e9 })
    const rowsOf = (r: AccountReport) => Object.fromEntries(r.streams.map((s) => [s.stream, s.counts.rows]))
    if (JSON.stringify(rowsOf(run.report)) !== JSON.stringify(rowsOf(free.report))) {
      return yield* new BenchError({ step: "whole account", reason: `the throttled run landed ${JSON.stringify(rowsOf(run.report))}, the unthrottled one ${JSON.stringify(rowsOf(free.report))}` })
    }
    const seconds = run.wallMs / 1000
    const floorSec = Math.max(0, run.actual - options.maxPoints) / restoreRate
    const streams = run.report.streams.map((s) => s.stream)
    const pointsPerRow = Object.fromEntries(run.report.streams.map((s) => [s.stream, s.counts.rows === 0 ? 0 : Math.round((10 * s.counts.costPoints) / s.counts.rows) / 10]))
    return {
      jobs: options.jobs,
      seconds,
      floorSec,
      efficiency: floorSec / seconds,
      throttled: run.throttled,
      maxPoints: options.maxPoints,
      restoreRate,
      points: run.actual,
      requestedPoints: run.requested,
      unthrottledSec,
      rows: run.report.streams.reduce((n, s) => n + s.counts.rows, 0),
      streams,
      pointsPerRow,
      loss: run.loss
    } satisfies WholeAccountResult
  })

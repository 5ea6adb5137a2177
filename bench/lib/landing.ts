import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AccessTokens } from "../../src/auth/AccessTokens.js"
import { pageBatches, Pager } from "../../src/sync/paging/Pager.js"
import { connectAccount } from "./connector.js"
import { benchDatabaseUrl } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { machineCores, processCpuSeconds } from "./machine.js"
import { connectAndBackfill, inConnector, jobsStream, newAccount, unlimited } from "./benchAccounts.js"

/** Landing end to end against COPY of the same rows (issue 36 point 5; 0.5 before it). */
export const landingGoal = { copyRatio: 0.7 } as const

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
  /**
   * The most the landing's CPU per row allows on this machine: its cores busy all along with the connector, Postgres
   * and the emulator (which a real deployment does not run), at the CPU per row each spent. The landing's ratio can
   * come near this, not beyond it.
   */
  readonly cpuBound: { readonly cores: number; readonly rowsPerSec: number; readonly copyRatio: number }
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
        const cpuSecPer10k = { connector: (run.cpuMs / 1000) * (10_000 / run.rows), postgres: run.postgresCpuSec * (10_000 / run.rows), emulator: emulatorCpuSec * (10_000 / run.rows) }
        const cores = machineCores()
        const boundRowsPerSec = (cores * 10_000) / (cpuSecPer10k.connector + cpuSecPer10k.postgres + cpuSecPer10k.emulator)
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
          cpuSecPer10k: cpuSecPer10k.connector,
          postgresCpuSecPer10k: cpuSecPer10k.postgres,
          emulatorCpuSecPer10k: cpuSecPer10k.emulator,
          fetchOnly: {
            rowsPerSec: (fetched.rows * 1000) / fetched.wallMs,
            copyRatio: (fetched.rows * 1000) / fetched.wallMs / copyRowsPerSec,
            cpuSecPer10k: fetched.cpuSec * (10_000 / fetched.rows),
            emulatorCpuSecPer10k: fetched.emulatorCpuSec * (10_000 / fetched.rows)
          },
          cpuBound: { cores, rowsPerSec: boundRowsPerSec, copyRatio: boundRowsPerSec / copyRowsPerSec }
        } satisfies LandingResult
      })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// History: what SYNC_HISTORY costs the landing (the same backfill with it off and on) and the warehouse

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { childEnv, connectAccount, connectorLayer, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { runConnectorChild } from "./processes.js"
import { connectAndBackfill, fullPageCost, inConnector, jobsStream, newAccount, unlimited } from "./benchAccounts.js"

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

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { connectAndBackfill, inConnector, newAccount, unlimited } from "./benchAccounts.js"

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

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SyncRunner } from "../../src/run/SyncRunner.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { connectAndBackfill, inConnector, newAccount, unlimited } from "./benchAccounts.js"

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

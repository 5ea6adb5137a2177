import { Effect } from "effect"
import type { Limits } from "../../src/emulator/EmulatorAdmin.js"
import { CostMeter, meteredCostBudget, reactiveCostBudget } from "./budgets.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { connectAndBackfill, fullPageCost, inConnector, jobsStream, newAccount } from "./benchAccounts.js"

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

import { Effect } from "effect"
import type { Limits } from "../../src/emulator/EmulatorAdmin.js"
import { type AccountReport, SyncRunner } from "../../src/run/SyncRunner.js"
import { CostMeter, meteredCostBudget } from "./budgets.js"
import { type BucketLoss, bucketLoss } from "./bucketLoss.js"
import { connectAccount, type Env } from "./connector.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { inConnector, uniqueAccountId, unlimited } from "./benchAccounts.js"

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

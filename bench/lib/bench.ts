import { Effect } from "effect"
import * as fs from "node:fs"
import { accountsRun, type AccountsRun, memoryRun, type MemoryRun } from "./benchmarks.js"
import { budgetBench, unthrottledBackfillSeconds } from "./budgetBench.js"
import { exactnessBench } from "./exactness.js"
import { historyBench } from "./history.js"
import { landingBench, landingGoal } from "./landing.js"
import { wholeAccountBench } from "./wholeAccount.js"
import { freshSchemaLayer, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { freshnessBench } from "./freshness.js"
import type { FreshnessOptions } from "./freshnessResult.js"
import { startEmulatorProcess } from "./emulatorProcess.js"
import { describeMachine, machineInfo } from "./machine.js"
import { hasRuns, scaleBench } from "./scale.js"
import { defaultScaleOptions, quickScaleOptions, type ScaleOptions } from "./scaleOptions.js"
import type { BenchResults } from "./report.js"
import { writePathBench } from "./writePath.js"

export type BenchName = "budget" | "landing" | "writePath" | "memory" | "accounts" | "exactness" | "freshness" | "wholeAccount" | "scale" | "history"

export interface BenchOptions {
  readonly only: ReadonlyArray<BenchName>
  readonly budgetJobs: number
  /** The budget run's bucket size (maximumAvailable). */
  readonly budgetMaxPoints: number
  /** The budget run's floor in seconds; default: 30 s, or 1.5 x the unthrottled time of the same jobs when longer. */
  readonly floorSec?: number
  readonly landingJobs: number
  /** Jobs of the write path's figure (the landing without the fetching, against COPY + merge and COPY). */
  readonly writePathJobs: number
  /** Jobs of each backfill the history figure compares (off and on). */
  readonly historyJobs: number
  readonly memoryJobs: ReadonlyArray<number>
  readonly accounts: number
  readonly jobsPerAccount: number
  readonly concurrencies: ReadonlyArray<number>
  /** Restore rate of each account's bucket in the many-accounts run (maximum 10,000 points as by default). */
  readonly accountsRestoreRate: number
  /** Jobs of the account whose full passes the exactness figure measures. */
  readonly exactnessJobs: number
  /** Webhooks against polling: accounts at the default bucket, a steady stream of edits, a burst of deliveries. */
  readonly freshness: FreshnessOptions
  /** Jobs of the whole-account run's account (its other collections scale with them). */
  readonly wholeAccountJobs: number
  /** The whole-account run's bucket size. */
  readonly wholeAccountMaxPoints: number
  /** Its floor in seconds (default 40 s); 1.5 x the unthrottled time of the same backfill when that is longer. */
  readonly wholeAccountFloorSec?: number
  /** Many workers: dispatch, 1/2/4 worker processes, one worker holding many accounts, failover. */
  readonly scale: ScaleOptions
}

export const defaultOptions: BenchOptions = {
  only: ["landing", "writePath", "budget", "memory", "accounts", "exactness", "freshness", "wholeAccount", "scale", "history"],
  budgetJobs: 100_000,
  // the example bucket (10,000 points, 20,000 points/s: it holds half a second of restore) scaled to a
  // 30 s floor for 100,000 jobs: ~100,000 points/s restore, so 50,000 points
  budgetMaxPoints: 50_000,
  landingJobs: 200_000,
  writePathJobs: 200_000,
  historyJobs: 100_000,
  memoryJobs: [100_000, 1_000_000],
  accounts: 50,
  jobsPerAccount: 2_000,
  concurrencies: [4, 16, 50],
  accountsRestoreRate: 8_000,
  exactnessJobs: 50_000,
  freshness: { accounts: 20, jobsPerAccount: 1_000, editsPerSecond: 4, seconds: 30, burstPerSecond: 500, burstSeconds: 5, burstLoadWorkers: 2, burstLoadJobs: 100_000 },
  // ~375 points a job with everything it carries (its client, visits, invoices...): ~2.2 M points for a 45 s floor
  // at ~48,000 points/s. The bucket holds 2 s of restore: pages are sized so that their requested cost (a full inner
  // page of 20 line items a parent: 3.5 x what they cost) fits it, and a bucket that filled in half a second would sit
  // at its maximum while each such page is in flight
  wholeAccountJobs: 6_000,
  wholeAccountMaxPoints: 100_000,
  wholeAccountFloorSec: 45,
  scale: defaultScaleOptions
}

/** Small sizes for the smoke test and a quick look: the same code paths, seconds instead of minutes. */
export const quickOptions: BenchOptions = {
  only: ["landing", "writePath", "budget", "memory", "accounts", "exactness", "freshness", "wholeAccount", "scale", "history"],
  budgetJobs: 3_000,
  budgetMaxPoints: 10_000,
  floorSec: 3,
  landingJobs: 3_000,
  writePathJobs: 3_000,
  historyJobs: 2_000,
  memoryJobs: [1_000, 3_000],
  accounts: 6,
  jobsPerAccount: 300,
  concurrencies: [2, 6],
  accountsRestoreRate: 4_000,
  exactnessJobs: 2_000,
  freshness: { accounts: 4, jobsPerAccount: 200, editsPerSecond: 4, seconds: 4, burstPerSecond: 200, burstSeconds: 1, burstLoadWorkers: 2, burstLoadJobs: 5_000 },
  wholeAccountJobs: 150,
  wholeAccountMaxPoints: 10_000,
  wholeAccountFloorSec: 4,
  scale: quickScaleOptions
}

const say = (line: string) => Effect.sync(() => process.stderr.write(`bench: ${line}\n`))

export const runBench = (options: BenchOptions, command: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const started = performance.now()
      const machine = yield* machineInfo.pipe(Effect.provide(freshSchemaLayer(freshSchemaName("benchinfo"))))
      yield* say(`machine: ${describeMachine(machine)}`)
      const emulator = yield* startEmulatorProcess()
      yield* say(`emulator child ${emulator.pid} at ${emulator.baseUrl}`)
      const wants = (name: BenchName) => options.only.includes(name)
      let results: BenchResults = { machine: describeMachine(machine), machineDetails: machine, takenAt: new Date().toISOString(), command, totalSeconds: 0 }

      if (wants("landing")) {
        yield* say(`landing: unthrottled backfill of ${options.landingJobs} jobs, then COPY of the same rows`)
        const landing = yield* landingBench(emulator, options.landingJobs)
        results = { ...results, landing: { ...landing, goal: landingGoal } }
        yield* say(`landing: ${Math.round(landing.rowsPerSec)} rows/s, COPY ${Math.round(landing.copyRowsPerSec)} rows/s`)
      }
      if (wants("writePath")) {
        yield* say(`writePath: ${options.writePathJobs} jobs landed without fetching, by the page statement and by COPY + merge, then COPY`)
        const writePath = yield* writePathBench(options.writePathJobs)
        results = { ...results, writePath: { ...writePath, goal: { copyRatio: 0.5 } } }
        yield* say(
          `writePath: page statement ${Math.round(writePath.pageStatement.rowsPerSec)} rows/s, COPY + merge ${Math.round(writePath.copyAndMerge.rowsPerSec)}, COPY ${Math.round(writePath.copyRowsPerSec)}`
        )
      }
      if (wants("history")) {
        yield* say(`history: backfills of ${options.historyJobs} jobs with SYNC_HISTORY off and on, alternated`)
        const history = yield* historyBench(emulator, options.historyJobs)
        results = { ...results, history }
        yield* say(
          `history: ${Math.round(history.rowsPerSecondWithout)} rows/s without, ${Math.round(history.rowsPerSecondWith)} with (ratio ${history.ratio.toFixed(3)}), ${Math.round(history.bytesPerVersion)} bytes per job version`
        )
      }
      if (wants("budget")) {
        // the bucket, not the engine, must bind: the floor is never less than 1.5 x the engine's own time (from this
        // run's landing bench, or measured here when it did not run)
        const unthrottledSec =
          options.floorSec !== undefined ? 0 : results.landing ? options.budgetJobs / results.landing.rowsPerSec : yield* unthrottledBackfillSeconds(emulator, options.budgetJobs)
        const floorSec = options.floorSec ?? Math.max(30, Math.ceil(1.5 * unthrottledSec))
        yield* say(`budget: ${options.budgetJobs} jobs, bucket ${options.budgetMaxPoints} points, floor ${floorSec} s; ours, then the reactive baseline`)
        const budget = yield* budgetBench(emulator, { jobs: options.budgetJobs, maxPoints: options.budgetMaxPoints, floorSec })
        results = { ...results, budget: { ...budget, goal: { efficiency: 0.97, throttled: 0, speedupVsReactive: 1.3 } } }
        yield* say(`budget: efficiency ${budget.efficiency.toFixed(3)} in ${budget.seconds.toFixed(1)} s, reactive ${budget.reactive.seconds.toFixed(1)} s`)
      }
      if (wants("memory")) {
        const runs: Array<MemoryRun> = []
        for (const jobs of options.memoryJobs) {
          yield* say(`memory: child backfill of ${jobs} jobs under /usr/bin/time -v`)
          const run = yield* memoryRun(emulator, jobs)
          runs.push(run)
          yield* say(
            `memory: ${jobs} jobs, peak RSS ${run.peakRssMb.toFixed(1)} MB, ${run.seconds.toFixed(1)} s` +
              (run.userSecPer10k !== undefined ? `, CPU per 10k rows: user ${run.userSecPer10k.toFixed(2)} s, system ${run.systemSecPer10k?.toFixed(2)} s` : "")
          )
        }
        const smallest = runs[0]
        const largest = runs.length > 1 ? runs[runs.length - 1] : undefined
        results = {
          ...results,
          memory: {
            ...(smallest ? { peakRssMb100k: smallest.peakRssMb } : {}),
            ...(largest ? { peakRssMb: largest.peakRssMb } : {}),
            runs,
            goal: { peakRssMb: 200 }
          }
        }
      }
      if (wants("accounts")) {
        const runs: Array<AccountsRun> = []
        for (const concurrency of options.concurrencies) {
          yield* say(`accounts: ${options.accounts} x ${options.jobsPerAccount} jobs at concurrency ${concurrency}`)
          const run = yield* accountsRun(emulator, {
            accounts: options.accounts,
            jobsPerAccount: options.jobsPerAccount,
            concurrency,
            restoreRate: options.accountsRestoreRate
          })
          runs.push(run)
          yield* say(`accounts: concurrency ${concurrency}: ${Math.round(run.rowsPerSec)} rows/s, ratio ${run.ratioToCeiling.toFixed(3)}`)
        }
        results = { ...results, accounts: runs }
      }
      if (wants("exactness")) {
        yield* say(`exactness: two full passes of ${options.exactnessJobs} jobs, no churn`)
        const exactness = yield* exactnessBench(emulator, options.exactnessJobs)
        results = { ...results, exactness: { ...exactness, goal: { overheadRatio: 0.05 } } }
        yield* say(`exactness: ${exactness.overheadPoints} of ${exactness.plainPoints} points (${(100 * exactness.overheadRatio).toFixed(2)}%)`)
      }
      if (wants("freshness")) {
        const f = options.freshness
        yield* say(
          `freshness: ${f.accounts} accounts x ${f.jobsPerAccount} jobs at the default bucket, ${f.editsPerSecond} edits/s for ${f.seconds} s through serve's webhooks, ` +
            `then an incremental sync over the same edits, then a burst of ${f.burstPerSecond} deliveries/s for ${f.burstSeconds} s while ${f.burstLoadWorkers} workers backfill ${f.burstLoadJobs} jobs each`
        )
        const freshness = yield* freshnessBench(emulator, f)
        results = { ...results, freshness: { ...freshness, goal: { p99Seconds: 5, ratioToNodeCost: 1.1, webhookAnswerP99Ms: 100, duringBackfillP99Seconds: 5 } } }
        yield* say(
          `freshness: lag p50 ${freshness.p50Seconds.toFixed(2)} s, p99 ${freshness.p99Seconds.toFixed(2)} s, ${freshness.pointsPerChangedRow.toFixed(1)} points per row ` +
            `(node ${freshness.nodeCost}); polling p50 ${freshness.polling.p50Seconds.toFixed(0)} s, ${freshness.polling.pointsPerChangedRow.toFixed(1)} points per row; ` +
            `webhook answer p99 ${freshness.webhookAnswerP99Ms.toFixed(1)} ms at ${freshness.burst.perSecond.toFixed(0)}/s; ` +
            `mid-backfill p99 ${freshness.duringBackfillP99Seconds.toFixed(2)} s (${freshness.duringBackfill.landedMidBackfill} of ${freshness.duringBackfill.edits} edits)`
        )
      }
      if (wants("wholeAccount")) {
        yield* say(`wholeAccount: every stream of one account of ${options.wholeAccountJobs} jobs, unthrottled, then against a bucket of ${options.wholeAccountMaxPoints} points`)
        const whole = yield* wholeAccountBench(emulator, { jobs: options.wholeAccountJobs, maxPoints: options.wholeAccountMaxPoints, ...(options.wholeAccountFloorSec !== undefined ? { floorSec: options.wholeAccountFloorSec } : {}) })
        results = { ...results, wholeAccount: { ...whole, goal: { efficiency: 0.97, throttled: 0 } } }
        yield* say(`wholeAccount: efficiency ${whole.efficiency.toFixed(3)} in ${whole.seconds.toFixed(1)} s (floor ${whole.floorSec.toFixed(1)} s), ${whole.throttled} throttled; beyond the floor: ${JSON.stringify(whole.loss)}`)
      }
      if (wants("scale")) {
        const scale = yield* scaleBench(emulator, options.scale)
        results = {
          ...results,
          scale: {
            ...scale,
            goal: { claimsPerSecond: 300, dueToStartP99Seconds: 2, failoverSeconds: 60, failoverSecondsUnderCap: 30, hungWorkerReleaseSeconds: 60, doubleRuns: 0, oneWorker500RatioToCeiling: 0.9, oneWorker500PeakRssMb: 500 }
          }
        }
      }
      return { ...results, totalSeconds: (performance.now() - started) / 1000 }
    })
  )

/** The keys of `bench/results.json` that hold one benchmark's figures. */
const benchmarkKeys: ReadonlyArray<string> = ["budget", "landing", "writePath", "history", "memory", "accounts", "exactness", "freshness", "wholeAccount", "scale"]

/**
 * The results written over `earlier`: a run that made every benchmark found there replaces the file; a partial run
 * (`--only freshness`) replaces the figures of the benchmarks it made, keeps the others with the run they came from
 * (the top-level machine, takenAt, command), and is listed under `updates`.
 */
export const mergeResults = (earlier: Record<string, unknown>, results: BenchResults): Record<string, unknown> => {
  // a scale run of some of its parts replaces only their figures: the earlier run's others, settings and load stay
  if (results.scale && !hasRuns(results.scale) && typeof earlier.scale === "object" && earlier.scale !== null) {
    const { settings: _settings, loadAverageBefore: _load, ...figures } = results.scale
    results = { ...results, scale: { ...(earlier.scale as typeof results.scale), ...figures } }
  }
  const made = benchmarkKeys.filter((k) => k in results)
  const kept = benchmarkKeys.filter((k) => k in earlier && !made.includes(k))
  if (kept.length === 0) return { ...results }
  const update = { takenAt: results.takenAt, command: results.command, machine: results.machine, totalSeconds: results.totalSeconds, benchmarks: made }
  const updates = Array.isArray(earlier.updates) ? (earlier.updates as ReadonlyArray<unknown>) : []
  return { ...earlier, ...Object.fromEntries(made.map((k) => [k, (results as unknown as Record<string, unknown>)[k]])), updates: [...updates, update] }
}

export const writeResults = (results: BenchResults, file: string) =>
  Effect.try({
    try: () => {
      const earlier = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>) : {}
      fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(mergeResults(earlier, results), null, 2)}\n`)
      fs.renameSync(`${file}.tmp`, file)
    },
    catch: (e) => new BenchError({ step: "write results", reason: String(e) })
  })


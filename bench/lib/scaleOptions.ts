import type { HealingOptions } from "./scaleHealing.js"
import type { IdleCycleOptions } from "./idleCycle.js"

/** The scale bench's parts; a run of some of them replaces only their figures in bench/results.json. */
export const scaleParts = ["idle", "workers", "failover", "healing", "oneWorker"] as const
export type ScalePart = (typeof scaleParts)[number]

export interface ScaleOptions {
  /** Accounts of the 1/2/4-worker runs, their jobs, and the bucket that binds them (small restore rate). */
  readonly accounts: number
  readonly jobsPerAccount: number
  readonly maxPoints: number
  readonly restoreRate: number
  readonly processes: ReadonlyArray<number>
  /** Each worker's --concurrency: jobs doing CPU work at once (it holds every account in flight). */
  readonly concurrencyPerWorker: number
  /** Due-to-start: jobs enqueued at this rate for this long, two workers waiting. */
  readonly steadyPerSecond: number
  readonly steadySeconds: number
  /** Failover: accounts (and their jobs) two workers share when one is SIGKILLed. */
  readonly failoverAccounts: number
  readonly failoverJobs: number
  /** One worker holding this many accounts at the real bucket (10,000 points, 500/s), each with these jobs. */
  readonly oneWorkerAccounts: number
  readonly oneWorkerJobs: number
  /** A worker SIGKILLed with the backfill cap full, a worker hung (SIGSTOP): see scaleHealing.ts. */
  readonly healing: HealingOptions
  /** The parts run (default: all); `--scale-parts workers` for the 1/2/4-worker runs alone. */
  readonly parts?: ReadonlyArray<ScalePart>
  /** A `sync` cycle over this many current accounts with nothing changed (the part `idle`). */
  readonly idleCycle: IdleCycleOptions
}

// 50 slots a worker with a pool of 12 sessions: 250 slots on 8 sessions (4 workers must stay under the server's 100
// connections) starved the pool on this shared 2-core machine (runs failed with "Failed to acquire connection")
export const defaultScaleOptions: ScaleOptions = {
  accounts: 1000,
  jobsPerAccount: 40,
  maxPoints: 600,
  // 40 jobs at about 32 points a row: 66 s of restore an account, so the buckets bind (1,000 accounts: 600 rows/s)
  restoreRate: 10,
  processes: [1, 2, 4],
  concurrencyPerWorker: 50,
  steadyPerSecond: 20,
  steadySeconds: 10,
  failoverAccounts: 10,
  failoverJobs: 3000,
  oneWorkerAccounts: 500,
  oneWorkerJobs: 600,
  healing: { capAccounts: 8, capJobs: 3000, cap: 4, hungAccounts: 2, hungJobs: 3000, latencyMs: 400 },
  idleCycle: { accounts: 1000, jobs: 5, concurrency: 8, cycles: 3 }
}

export const quickScaleOptions: ScaleOptions = {
  accounts: 12,
  jobsPerAccount: 40,
  maxPoints: 600,
  restoreRate: 400,
  processes: [1, 2],
  concurrencyPerWorker: 8,
  steadyPerSecond: 10,
  steadySeconds: 2,
  failoverAccounts: 2,
  failoverJobs: 2000,
  oneWorkerAccounts: 6,
  oneWorkerJobs: 100,
  healing: { capAccounts: 8, capJobs: 1500, cap: 4, hungAccounts: 2, hungJobs: 1500, latencyMs: 400 },
  idleCycle: { accounts: 20, jobs: 5, concurrency: 4, cycles: 2 }
}

import { chaosDefaults, type ChaosOptions } from "./chaos.js"

/** The reduced chaos run of the test suite: 2 accounts x 2,500 jobs, 3 kills, 1 termination, a revocation. */
export const quickChaos = (seed: number): ChaosOptions => ({
  ...chaosDefaults(seed),
  accounts: 2,
  jobs: 2_500,
  minKills: 3,
  minTerminations: 1,
  killsPerPass: { backfill: 2, sync: 0, full: 1 },
  incrementalSyncs: 1,
  killWindowMs: { backfill: [100, 1_500], sync: [0, 500] },
  faults: { errorRate: 0.06, dropRate: 0.06, truncateRate: 0.06, latencyRate: 0.1, latencyMs: 300, seed },
  editsPerPass: 60,
  deletesPerPass: 20
})

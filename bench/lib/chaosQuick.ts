import { chaosDefaults, type ChaosOptions } from "./chaosOptions.js"

/**
 * The reduced chaos run of the test suite: 2 accounts x 400 jobs (the whole account), 3 kills (the first with the
 * backfill cap of 1 full and the other backfill waiting), 1 SIGSTOP, 1 termination, a revocation.
 */
export const quickChaos = (seed: number): ChaosOptions => ({
  ...chaosDefaults(seed),
  accounts: 2,
  jobs: 400,
  minKills: 3,
  minTerminations: 1,
  killsPerPass: { backfill: 2, sync: 0, full: 1 },
  incrementalSyncs: 1,
  killWindowMs: { backfill: [100, 1_500], sync: [0, 500] },
  faults: { errorRate: 0.06, dropRate: 0.06, truncateRate: 0.06, latencyRate: 0.1, latencyMs: 300, seed },
  // churn before the first two queries of each collection: the pages, not the pass's closing id listing (a deletion
  // made while that listing reads past the row waits for the next full pass, as the README says)
  churn: { ...chaosDefaults(seed).churn, queries: 2 },
  withholdBlock: 40,
  backfillCap: 1,
  hangsPerPass: { backfill: 1, full: 0 },
  editsPerPass: 60,
  deletesPerPass: 20
})

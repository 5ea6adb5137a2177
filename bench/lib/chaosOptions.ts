import type { Faults } from "../../src/emulator/EmulatorAdmin.js"

export interface ChaosOptions {
  readonly seed: number
  readonly accounts: number
  readonly jobs: number
  /** SIGKILLs of the connector child, at least (spread over the passes; the last pass kills until it is reached). */
  readonly minKills: number
  readonly minTerminations: number
  /** Kills planned per pass: backfill, each incremental sync, the final full pass. */
  readonly killsPerPass: { readonly backfill: number; readonly sync: number; readonly full: number }
  /** Incremental syncs between the backfill and the final full pass. */
  readonly incrementalSyncs: number
  /** Random moment of a kill, ms after the child's run started (its first sync_runs row), per pass kind. */
  readonly killWindowMs: { readonly backfill: readonly [number, number]; readonly sync: readonly [number, number] }
  readonly faults: Faults
  readonly editsPerPass: number
  readonly deletesPerPass: number
  /** Data moving under the pager (offset cursors): per query of a churned collection, during the backfill and the full pass. */
  readonly churn: { readonly creates: number; readonly edits: number; readonly deletes: number; readonly queries: number; readonly collections: ReadonlyArray<string> }
  /** Every `refreshCommitEvery`-th token update committed by a connector child kills its own backend at COMMIT. */
  readonly refreshCommitEvery: number
  /**
   * Share of nodes the emulator leaves out of the first account's pages after paging (`setPagingFaults` withhold: the
   * same nodes every time, line items too, pageInfo and totalCount as paged): its warehouse must equal what it is served.
   */
  readonly withhold: number
  /**
   * Beside the share, a block of this many consecutive records of every collection withheld from the same account
   * (its pages inside the block come back empty); before the final full pass the withheld set moves (another seed and
   * block): records become withheld, others visible again.
   */
  readonly withholdBlock: number
  /**
   * QUEUE_BACKFILLS_AT_ONCE of the backfill pass, fewer than the accounts: backfills wait their turn, and the pass's
   * first SIGKILL waits for the cap full with backfills waiting and kills the worker holding the most accounts.
   */
  readonly backfillCap: number
  /** SIGSTOPs per pass of the worker holding the most accounts, until a live worker holds them all; then SIGCONT. */
  readonly hangsPerPass: { readonly backfill: number; readonly full: number }
  readonly keepSchema?: boolean
}

export const chaosDefaults = (seed: number): ChaosOptions => ({
  seed,
  accounts: 5,
  jobs: 3_000,
  minKills: 10,
  minTerminations: 3,
  killsPerPass: { backfill: 5, sync: 2, full: 2 },
  incrementalSyncs: 2,
  killWindowMs: { backfill: [200, 10_000], sync: [0, 1_500] },
  faults: { errorRate: 0.05, dropRate: 0.02, truncateRate: 0.02, latencyRate: 0.05, latencyMs: 400, seed },
  editsPerPass: 400,
  deletesPerPass: 100,
  // before the first 15 queries of each collection (jobs take 30 pages): the pages, not the closing id listing
  churn: { creates: 1, edits: 2, deletes: 1, queries: 15, collections: ["jobs", "invoices"] },
  refreshCommitEvery: 3,
  withhold: 0.2,
  withholdBlock: 130,
  backfillCap: 2,
  hangsPerPass: { backfill: 1, full: 1 }
})

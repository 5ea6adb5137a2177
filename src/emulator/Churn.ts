import type { Account } from "./AppsAndAccounts.js"
import type { Change } from "./data/World.js"
import type { ChurnOptions } from "./EmulatorAdmin.js"
import { AdminRejected } from "./errors.js"
import { sequence } from "./Prng.js"
import type { RecordChanges } from "./RecordChanges.js"
import type { VirtualClock } from "./VirtualClock.js"

/**
 * Data that moves under the pager: before each admitted GraphQL query of an account that reads a churned collection,
 * seeded creates, edits and deletions of random records of that collection (behind and ahead of any cursor alike).
 * Counts are per query; a fraction is the chance of one more; `queries` bounds how many queries of each collection
 * are churned. Every change is logged for the test that checks the warehouse after.
 */

/** What churns, as the admin API's `setChurn` takes it (without the account and `stop`). */
export type ChurnSpec = Omit<ChurnOptions, "accountId" | "stop">

interface Active {
  readonly spec: ChurnSpec
  readonly next: () => number
  readonly churned: Map<string, number>
}

export class Churn {
  private readonly active = new Map<string, Active>()
  private fallback: Active | undefined
  private readonly logs = new Map<string, Array<Change>>()
  private running = false

  constructor(
    private readonly changes: RecordChanges,
    private readonly clock: VirtualClock
  ) {}

  /** Churn for one account, or for every account without its own; `null` stops it. */
  set(spec: ChurnSpec | null, account: Account | undefined): void {
    if (spec !== null) {
      for (const [name, value] of Object.entries({ creates: spec.creates, edits: spec.edits, deletes: spec.deletes })) {
        if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new AdminRejected({ reason: `setChurn: ${name} must be a number >= 0, got ${value}` })
      }
      if (account) for (const c of spec.collections ?? ["jobs"]) this.changes.recordsOf("setChurn", account, c)
    }
    const active = spec === null ? undefined : { spec, next: sequence(spec.seed ?? 1), churned: new Map<string, number>() }
    if (account === undefined) this.fallback = active
    else if (active === undefined) this.active.delete(account.accountId)
    else this.active.set(account.accountId, active)
  }

  log(accountId: string): ReadonlyArray<Change> {
    return this.logs.get(accountId) ?? []
  }

  /** Before a query of the account that reads `collections` (root field names). */
  beforeQuery(account: Account, collections: ReadonlyArray<string>): void {
    const churn = this.active.get(account.accountId) ?? this.fallback
    if (churn === undefined || this.running) return
    this.running = true
    try {
      const { spec, next, churned } = churn
      const draw = (rate: number | undefined) => {
        const r = rate ?? 0
        return Math.floor(r) + (next() < r - Math.floor(r) ? 1 : 0)
      }
      let log = this.logs.get(account.accountId)
      if (log === undefined) this.logs.set(account.accountId, (log = []))
      const atMs = this.clock.nowMs()
      for (const collection of spec.collections ?? ["jobs"]) {
        if (!account.world.has(collection) || !collections.includes(collection)) continue
        const n = churned.get(collection) ?? 0
        if (spec.queries !== undefined && n >= spec.queries) continue
        churned.set(collection, n + 1)
        const seed = Math.floor(next() * 2 ** 31)
        const record = (kind: Change["kind"], ids: ReadonlyArray<string>) => {
          for (const id of ids) log.push({ collection, kind, id, atMs })
        }
        const creates = draw(spec.creates)
        if (creates > 0) record("create", this.changes.create("churn", account, collection, creates, seed))
        const edits = draw(spec.edits)
        if (edits > 0) record("update", this.changes.edit("churn", account, collection, { count: edits, seed: seed + 1 }))
        const deletes = draw(spec.deletes)
        if (deletes > 0) record("destroy", this.changes.remove("churn", account, collection, { count: deletes, seed: seed + 2 }))
      }
    } finally {
      this.running = false
    }
  }
}

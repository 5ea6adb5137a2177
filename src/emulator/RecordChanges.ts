import type { Account } from "./AppsAndAccounts.js"
import type { Change, Records } from "./data/World.js"
import { AdminRejected } from "./errors.js"
import type { RecordSelection } from "./EmulatorAdmin.js"
import type { VirtualClock } from "./VirtualClock.js"

/**
 * Creates, edits and deletes of an account's records, for the admin API and for churn alike: each change made now
 * (on the emulator's clock) and reported, record by record, to `onChange` (webhooks, the churn log).
 */
export class RecordChanges {
  private draws = 0

  constructor(
    private readonly clock: VirtualClock,
    private readonly onChange: (account: Account, change: Change) => void
  ) {}

  recordsOf(operation: string, account: Account, collection: string): Records {
    if (!account.world.has(collection)) {
      throw new AdminRejected({ reason: `${operation}: no collection ${collection}; the collections are ${account.world.names.join(", ")}` })
    }
    return account.world.records(collection)
  }

  /** The live records `selection` names: its ids (each must be live), or `count` drawn from its seed. */
  select(operation: string, account: Account, records: Records, selection: RecordSelection): ReadonlyArray<number> {
    if (selection.ids) {
      return selection.ids.map((id) => {
        const index = records.collection.indexOfId(id)
        if (index === undefined || !records.collection.isLive(index)) {
          throw new AdminRejected({ reason: `${operation}: account ${account.accountId} has no live ${records.def.nodeType} ${id}` })
        }
        return index
      })
    }
    const count = selection.count ?? 1
    if (!Number.isSafeInteger(count) || count < 0) throw new AdminRejected({ reason: `${operation}: count must be an integer >= 0, got ${count}` })
    return records.collection.pickLive(count, selection.seed ?? this.nextSeed(account))
  }

  create(operation: string, account: Account, collection: string, count: number, seed?: number): ReadonlyArray<string> {
    if (!Number.isSafeInteger(count) || count < 0) throw new AdminRejected({ reason: `${operation}: count must be an integer >= 0, got ${count}` })
    const records = this.recordsOf(operation, account, collection)
    const indices = records.create(count, seed ?? account.seed + records.collection.size + this.nextSeed(account), this.clock.nowMs())
    return this.report(account, records, "create", indices)
  }

  edit(operation: string, account: Account, collection: string, selection: RecordSelection): ReadonlyArray<string> {
    const records = this.recordsOf(operation, account, collection)
    const indices = this.select(operation, account, records, selection)
    records.edit(indices, selection.seed, this.clock.nowMs())
    return this.report(account, records, "update", indices)
  }

  remove(operation: string, account: Account, collection: string, selection: RecordSelection): ReadonlyArray<string> {
    const records = this.recordsOf(operation, account, collection)
    const indices = this.select(operation, account, records, selection)
    const ids = this.report(account, records, "destroy", indices)
    records.remove(indices)
    return ids
  }

  editLineItems(
    operation: string,
    account: Account,
    collection: string,
    selection: RecordSelection & { readonly add?: number; readonly remove?: number; readonly edit?: number }
  ): ReadonlyArray<string> {
    const records = this.recordsOf(operation, account, collection)
    if (records.def.children === undefined || records.def.children.of !== undefined) {
      throw new AdminRejected({ reason: `${operation}: ${collection} has no line items of its own` })
    }
    const indices = this.select(operation, account, records, selection)
    const seed = selection.seed ?? this.nextSeed(account)
    indices.forEach((index, k) => records.editChildren(index, selection, seed + k, this.clock.nowMs()))
    return this.report(account, records, "update", indices)
  }

  private nextSeed(account: Account): number {
    return account.seed + 7 * ++this.draws
  }

  private report(account: Account, records: Records, kind: Change["kind"], indices: ReadonlyArray<number>): ReadonlyArray<string> {
    const atMs = this.clock.nowMs()
    const ids = indices.map((i) => records.collection.idOf(i))
    for (const id of ids) this.onChange(account, { collection: records.name, kind, id, atMs })
    return ids
  }
}

import type { Account } from "./AppsAndAccounts.js"
import type { Records } from "./data/Records.js"
import type { Change } from "./data/World.js"
import { AdminRejected } from "./errors.js"
import type { RecordSelection } from "./EmulatorAdmin.js"
import type { VirtualClock } from "./VirtualClock.js"

/** One version of a record: as it was listed after a change (before it, for `seeded`; its last, for `destroy`). */
export interface RecordVersion {
  readonly atMs: number
  /** `seeded`: the state a generated record had before its first change. */
  readonly kind: "seeded" | Change["kind"]
  readonly record: Record<string, unknown> & { readonly id: string }
}

/**
 * Creates, edits and deletes of an account's records, for the admin API and for churn alike: each change made now
 * (on the emulator's clock) and reported, record by record, to `onChange` (webhooks, the churn log). Every version a
 * changed record had is kept (`versions`): the change log a history test compares with.
 */
export class RecordChanges {
  private draws = 0
  /** Per account, per `collection/id`: the record's versions, oldest first. */
  private readonly versionLog = new Map<string, Map<string, Array<RecordVersion>>>()

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
    this.keepSeeded(account, records, indices)
    records.edit(indices, selection.seed, this.clock.nowMs())
    return this.report(account, records, "update", indices)
  }

  remove(operation: string, account: Account, collection: string, selection: RecordSelection): ReadonlyArray<string> {
    const records = this.recordsOf(operation, account, collection)
    const indices = this.select(operation, account, records, selection)
    this.keepSeeded(account, records, indices)
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
    this.keepSeeded(account, records, indices)
    indices.forEach((index, k) => records.editChildren(index, selection, seed + k, this.clock.nowMs()))
    return this.report(account, records, "update", indices)
  }

  /** The versions of one record, oldest first (none: it never changed since the world was made). */
  versions(account: Account, collection: string, id: string): ReadonlyArray<RecordVersion> {
    return this.versionLog.get(account.accountId)?.get(`${this.recordsOf("recordVersions", account, collection).name}/${id}`) ?? []
  }

  private log(account: Account, records: Records, index: number, version: Omit<RecordVersion, "record">): void {
    let byRecord = this.versionLog.get(account.accountId)
    if (byRecord === undefined) this.versionLog.set(account.accountId, (byRecord = new Map()))
    const key = `${records.name}/${records.collection.idOf(index)}`
    let versions = byRecord.get(key)
    if (versions === undefined) byRecord.set(key, (versions = []))
    versions.push({ ...version, record: account.world.listed(records.name, index) })
  }

  /** A generated record's state before its first change: the version the service had until then. */
  private keepSeeded(account: Account, records: Records, indices: ReadonlyArray<number>): void {
    const byRecord = this.versionLog.get(account.accountId)
    for (const index of indices) {
      if (byRecord?.has(`${records.name}/${records.collection.idOf(index)}`)) continue
      const updatedMs = records.tracksUpdates ? records.collection.updatedMs(index) : records.collection.createdMs(index)
      this.log(account, records, index, { atMs: updatedMs, kind: "seeded" })
    }
  }

  private nextSeed(account: Account): number {
    return account.seed + 7 * ++this.draws
  }

  private report(account: Account, records: Records, kind: Change["kind"], indices: ReadonlyArray<number>): ReadonlyArray<string> {
    const atMs = this.clock.nowMs()
    const ids = indices.map((i) => records.collection.idOf(i))
    for (const index of indices) this.log(account, records, index, { atMs, kind })
    for (const id of ids) this.onChange(account, { collection: records.name, kind, id, atMs })
    return ids
  }
}

import { decodeId, encodeId, isoSeconds } from "../Ids.js"
import { sequence, unit } from "../Prng.js"
import { type CursorMode, keysetCursor, offsetCursor, readCursor } from "./cursors.js"
import { Remaining } from "./Fenwick.js"
import { creationOrder, type Order, orderSignature, positionAfter, sortedOrder, type SortSpec } from "./orders.js"
import { createdWindow, type PageQuery, type View, viewOf } from "./views.js"

/**
 * One record collection of one account: records generated lazily from seeded segments (a million cost nothing until
 * served), an overlay of edits, deletions and creations, and pages by position or cursor over its orders (orders.ts)
 * and a query's view (views.ts), with the cursors of cursors.ts. What a record holds is the record type's business
 * (RecordType); this holds positions.
 */

/** What the collection asks of its record type. */
export interface RecordSource {
  /** The kind in the record's global id (`gid://service/<kind>/<n>`). */
  readonly idKind: string
  /** The value a sort key orders by (numbers and strings compare as such). */
  readonly sortValue: (key: string, index: number) => number | string
  readonly sortKeys: ReadonlyArray<string>
}

export interface Page {
  readonly indices: ReadonlyArray<number>
  readonly hasNextPage: boolean
  readonly hasPreviousPage: boolean
  readonly cursorOf: (index: number) => string
  readonly totalCount: () => number
}

interface Segment {
  readonly start: number
  readonly count: number
  readonly seed: number
  readonly fromMs: number
  readonly stepMs: number
  /** No generated update time is later than this (the time the segment was created). */
  readonly capMs: number
}

const DAY = 86_400_000

export class Collection {
  private readonly segments: Array<Segment> = []
  private size_ = 0
  private readonly updated = new Map<number, number>()
  private readonly deleted = new Set<number>()
  private readonly natural: Remaining = new Remaining(0)
  private readonly sortedCache = new Map<string, Order>()
  /** Bumped by every change: a cursor mode of `offset` and churn rely on nothing else. */
  version = 0

  constructor(
    readonly source: RecordSource,
    readonly idBase: number,
    private readonly options: { readonly cursorMode: () => CursorMode }
  ) {}

  get size(): number {
    return this.size_
  }

  get liveCount(): number {
    return this.size_ - this.deleted.size
  }

  /** Appends `count` records: the first batch created over the two years before `nowMs`, later ones since the newest. */
  append(count: number, seed: number, nowMs: number): ReadonlyArray<number> {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be an integer >= 0, got ${count}`)
    if (count === 0) return []
    const last = this.segments[this.segments.length - 1]
    const lastCreated = last ? this.createdMs(this.size_ - 1) : undefined
    const fromMs = lastCreated === undefined ? nowMs - 730 * DAY : Math.max(lastCreated, nowMs - count * 1000)
    const toMs = Math.max(fromMs, nowMs)
    const start = this.size_
    this.segments.push({ start, count, seed, fromMs, stepMs: (toMs - fromMs) / count, capMs: toMs })
    this.size_ += count
    this.natural.grow(this.size_)
    this.changed()
    return Array.from({ length: count }, (_, i) => start + i)
  }

  private changed(): void {
    this.sortedCache.clear()
    this.version++
  }

  segmentOf(index: number): Segment {
    let lo = 0
    let hi = this.segments.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.segments[mid]!.start <= index) lo = mid
      else hi = mid - 1
    }
    return this.segments[lo]!
  }

  /** The seed a record's values are drawn from. */
  seedOf(index: number): number {
    return this.segmentOf(index).seed
  }

  createdMs(index: number): number {
    const seg = this.segmentOf(index)
    return Math.floor((seg.fromMs + (index - seg.start) * seg.stepMs) / 1000) * 1000
  }

  /** The last update: set by an edit, else some time after creation (never after the segment's creation). */
  updatedMs(index: number): number {
    const edited = this.updated.get(index)
    if (edited !== undefined) return edited
    const seg = this.segmentOf(index)
    const created = this.createdMs(index)
    return Math.max(created, Math.min(seg.capMs, created + Math.floor(unit(seg.seed, index, 7_777) * 30 * DAY)))
  }

  createdIso(index: number): string {
    return isoSeconds(this.createdMs(index))
  }

  idNumber(index: number): number {
    return this.idBase + index + 1
  }

  idOf(index: number): string {
    return encodeId(this.source.idKind, this.idNumber(index))
  }

  /** The index an id of this collection names (live or not), if any. */
  indexOfId(id: string): number | undefined {
    const n = decodeId(this.source.idKind, id)
    if (n === undefined) return undefined
    const index = n - this.idBase - 1
    return index >= 0 && index < this.size_ ? index : undefined
  }

  isLive(index: number): boolean {
    return index >= 0 && index < this.size_ && !this.deleted.has(index)
  }

  liveIndices(): Array<number> {
    const out: Array<number> = []
    for (let i = 0; i < this.size_; i++) if (!this.deleted.has(i)) out.push(i)
    return out
  }

  /** An edit: the record's update time moves to `nowMs` (its field changes are the record type's). */
  touch(indices: ReadonlyArray<number>, nowMs: number): void {
    for (const i of indices) this.updated.set(i, nowMs)
    this.changed()
  }

  remove(indices: ReadonlyArray<number>): void {
    for (const i of indices) {
      if (this.deleted.has(i)) continue
      this.deleted.add(i)
      this.natural.remove(i)
      for (const order of this.sortedCache.values()) order.remaining.remove(order.positionOf(i))
    }
    this.version++
  }

  /** `count` distinct live indices chosen by `seed`, ascending; `among` restricts the choice. */
  pickLive(count: number, seed: number, among?: (index: number) => boolean): Array<number> {
    const eligible = (i: number) => !this.deleted.has(i) && (among === undefined || among(i))
    const next = sequence(seed)
    const chosen = new Set<number>()
    const want = Math.min(count, this.liveCount)
    let guard = 0
    while (chosen.size < want && guard++ < want * 50 + 1000) {
      const i = Math.floor(next() * this.size_)
      if (eligible(i)) chosen.add(i)
    }
    for (let i = 0; chosen.size < want && i < this.size_; i++) if (eligible(i)) chosen.add(i)
    return [...chosen].sort((a, b) => a - b)
  }

  // ---- orders ----------------------------------------------------------------------------------------------

  private naturalOrder(descending: boolean): Order {
    return creationOrder(this.size_, descending ? this.reversedNatural() : this.natural, descending)
  }

  private reversedNatural(): Remaining {
    const key = "~natural-descending"
    const cached = this.sortedCache.get(key)
    if (cached) return cached.remaining
    const remaining = new Remaining(this.size_)
    for (const d of this.deleted) remaining.remove(this.size_ - 1 - d)
    this.sortedCache.set(key, creationOrder(this.size_, remaining, true))
    return remaining
  }

  private sortedOrder(sort: ReadonlyArray<SortSpec>): Order {
    const signature = orderSignature(sort)
    const cached = this.sortedCache.get(signature)
    if (cached) return cached
    const order = sortedOrder(sort, this.size_, this.source.sortValue, this.deleted)
    this.sortedCache.set(signature, order)
    return order
  }

  /** Creation order (job numbers, creation times) needs no index: creation time never decreases with the index. */
  private orderOf(sort: ReadonlyArray<SortSpec>): Order {
    if (sort.length === 0) return this.naturalOrder(false)
    if (sort.length === 1 && (sort[0]!.key === "CREATED_AT" || sort[0]!.key === "JOB_NUMBER")) return this.naturalOrder(sort[0]!.direction === "DESCENDING")
    return this.sortedOrder(sort)
  }

  private view(order: Order, query: PageQuery): View {
    return viewOf(order, query, createdWindow(query.created, this.size_, (i) => this.createdMs(i)), this.size_, (i) => this.deleted.has(i))
  }

  // ---- pages -----------------------------------------------------------------------------------------------

  page(query: PageQuery): Page {
    const order = this.orderOf(query.sort)
    const view = this.view(order, query)
    const signature = orderSignature(query.sort)
    const mode = this.options.cursorMode()
    let start = 0
    if (query.offset !== undefined) start = Math.max(0, query.offset)
    else if (query.after !== undefined) {
      const cursor = readCursor(query.after, mode, signature, query.sort.length)
      start = cursor.mode === "offset" ? cursor.position : view.countBefore(positionAfter(order, query.sort, this.source.sortValue, cursor))
    }
    const indices: Array<number> = []
    for (let k = start; k < view.count && indices.length < query.first; k++) indices.push(order.at(view.positionAt(k)))
    const rankOf = new Map(indices.map((index, k) => [index, start + k]))
    const cursorOf = (index: number): string =>
      mode === "offset" ? offsetCursor(rankOf.get(index) ?? 0) : keysetCursor(signature, query.sort.map((s) => this.source.sortValue(s.key, index)), index)
    return {
      indices,
      hasNextPage: start + indices.length < view.count,
      hasPreviousPage: start > 0 && view.count > 0,
      cursorOf,
      totalCount: () => view.count
    }
  }

  /** Live rows matching the query's filters (its totalCount). */
  count(query: Omit<PageQuery, "first" | "sort">): number {
    return this.view(this.naturalOrder(false), { ...query, sort: [], first: 0 }).count
  }
}

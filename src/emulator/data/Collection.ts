import { decodeId, encodeId, isoSeconds } from "../Ids.js"
import { sequence, unit } from "../Prng.js"
import { Remaining } from "./Fenwick.js"

/**
 * One record collection of one account: records generated lazily from seeded segments (a million cost nothing until
 * served), an overlay of edits, deletions and creations, orders (creation order, or sorted by the collection's sort
 * keys, each a total order with the creation index breaking ties), filters, and pages by position or cursor. What a
 * record holds is the record type's business (RecordType); this holds positions.
 */

export type CursorMode = "offset" | "keyset"

export interface SortSpec {
  readonly key: string
  readonly direction: "ASCENDING" | "DESCENDING"
}

/** What the collection asks of its record type. */
export interface RecordSource {
  /** The kind in the record's global id (`gid://service/<kind>/<n>`). */
  readonly idKind: string
  /** The value a sort key orders by (numbers and strings compare as such). */
  readonly sortValue: (key: string, index: number) => number | string
  readonly sortKeys: ReadonlyArray<string>
}

/** A query's selection of rows: an order, what matches, and where the page starts. */
export interface PageQuery {
  readonly sort: ReadonlyArray<SortSpec>
  readonly first: number
  readonly after?: string
  readonly offset?: number
  /** Only these indices (an ids filter). */
  readonly only?: ReadonlySet<number>
  /** A window of creation times (creation time never decreases with the index). */
  readonly created?: TimeRange
  /** Any other filter, row by row. */
  readonly matches?: (index: number) => boolean
}

export interface TimeRange {
  readonly afterMs?: number
  readonly beforeMs?: number
  readonly eqMs?: number
}

export interface Page {
  readonly indices: ReadonlyArray<number>
  readonly hasNextPage: boolean
  readonly hasPreviousPage: boolean
  readonly cursorOf: (index: number) => string
  readonly totalCount: () => number
}

/** An `after` the collection cannot read (malformed, or issued for another order or mode). */
export class CursorRejected extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
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

/** The rows a query selects in its order: how many, the k-th, and how many come before a position of the order. */
interface View {
  readonly count: number
  readonly positionAt: (k: number) => number
  readonly countBefore: (position: number) => number
}

interface Order {
  /** The index at a position. */
  readonly at: (position: number) => number
  /** The position of an index. */
  readonly positionOf: (index: number) => number
  readonly remaining: Remaining
  readonly size: number
  /** Positions are indices (creation order, ascending). */
  readonly ascendingCreation: boolean
}

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

  private static signature(sort: ReadonlyArray<SortSpec>): string {
    return sort.map((s) => `${s.key}:${s.direction}`).join(",") || "DEFAULT"
  }

  private naturalOrder(descending: boolean): Order {
    const size = this.size_
    return descending
      ? { at: (p) => size - 1 - p, positionOf: (i) => size - 1 - i, remaining: this.reversedNatural(), size, ascendingCreation: false }
      : { at: (p) => p, positionOf: (i) => i, remaining: this.natural, size, ascendingCreation: true }
  }

  private reversedNatural(): Remaining {
    const key = "~natural-descending"
    const cached = this.sortedCache.get(key)
    if (cached) return cached.remaining
    const remaining = new Remaining(this.size_)
    for (const d of this.deleted) remaining.remove(this.size_ - 1 - d)
    const size = this.size_
    this.sortedCache.set(key, { at: (p) => size - 1 - p, positionOf: (i) => size - 1 - i, remaining, size, ascendingCreation: false })
    return remaining
  }

  private sortedOrder(sort: ReadonlyArray<SortSpec>): Order {
    const signature = Collection.signature(sort)
    const cached = this.sortedCache.get(signature)
    if (cached) return cached
    const n = this.size_
    const values = sort.map((s) => Array.from({ length: n }, (_, i) => this.source.sortValue(s.key, i)))
    const idx = new Int32Array(n)
    for (let i = 0; i < n; i++) idx[i] = i
    idx.sort((a, b) => {
      for (let k = 0; k < sort.length; k++) {
        const x = values[k]![a]!
        const y = values[k]![b]!
        const d = typeof x === "number" && typeof y === "number" ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0
        if (d !== 0) return sort[k]!.direction === "ASCENDING" ? d : -d
      }
      return a - b
    })
    const inverse = new Int32Array(n)
    for (let p = 0; p < n; p++) inverse[idx[p]!] = p
    const remaining = new Remaining(n)
    for (const d of this.deleted) remaining.remove(inverse[d]!)
    const order: Order = { at: (p) => idx[p]!, positionOf: (i) => inverse[i]!, remaining, size: n, ascendingCreation: false }
    this.sortedCache.set(signature, order)
    return order
  }

  /** Creation order (job numbers, creation times) needs no index: creation time never decreases with the index. */
  private orderOf(sort: ReadonlyArray<SortSpec>): Order {
    if (sort.length === 0) return this.naturalOrder(false)
    if (sort.length === 1 && (sort[0]!.key === "CREATED_AT" || sort[0]!.key === "JOB_NUMBER")) return this.naturalOrder(sort[0]!.direction === "DESCENDING")
    return this.sortedOrder(sort)
  }

  /** Index range [lo, hi) whose creation time can match. */
  private createdWindow(created: TimeRange | undefined): [number, number] {
    const firstAtLeast = (ms: number, strict: boolean): number => {
      let lo = 0
      let hi = this.size_
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        const c = this.createdMs(mid)
        if (strict ? c > ms : c >= ms) hi = mid
        else lo = mid + 1
      }
      return lo
    }
    let lo = 0
    let hi = this.size_
    if (created?.afterMs !== undefined) lo = Math.max(lo, firstAtLeast(created.afterMs, true))
    if (created?.beforeMs !== undefined) hi = Math.min(hi, firstAtLeast(created.beforeMs, false))
    if (created?.eqMs !== undefined) {
      lo = Math.max(lo, firstAtLeast(created.eqMs, false))
      hi = Math.min(hi, firstAtLeast(created.eqMs, true))
    }
    return [lo, Math.max(lo, hi)]
  }

  /** The rows of `query` in its order: by positions when nothing but creation time filters, else listed. */
  private view(order: Order, query: PageQuery): View {
    const [lo, hi] = this.createdWindow(query.created)
    const inWindow = (i: number) => i >= lo && i < hi
    if (query.only === undefined && query.matches === undefined) {
      if (lo === 0 && hi === this.size_) {
        const count = order.remaining.count(0, order.size)
        return { count, positionAt: (k) => order.remaining.kth(0, order.size, k), countBefore: (p) => order.remaining.count(0, Math.min(p, order.size)) }
      }
      if (order.ascendingCreation) {
        // ascending creation order: the window is a range of positions
        const count = order.remaining.count(lo, hi)
        return { count, positionAt: (k) => order.remaining.kth(lo, hi, k), countBefore: (p) => order.remaining.count(lo, Math.max(lo, Math.min(p, hi))) }
      }
    }
    const matches = (i: number) => !this.deleted.has(i) && inWindow(i) && (query.matches === undefined || query.matches(i))
    let positions: Int32Array
    if (query.only !== undefined) {
      positions = Int32Array.from([...query.only].filter((i) => i < this.size_ && matches(i)).map((i) => order.positionOf(i))).sort()
    } else {
      const list: Array<number> = []
      for (let p = 0; p < order.size; p++) if (matches(order.at(p))) list.push(p)
      positions = Int32Array.from(list)
    }
    const lowerBound = (p: number) => {
      let a = 0
      let b = positions.length
      while (a < b) {
        const mid = (a + b) >> 1
        if (positions[mid]! < p) a = mid + 1
        else b = mid
      }
      return a
    }
    return { count: positions.length, positionAt: (k) => positions[k] ?? -1, countBefore: lowerBound }
  }

  // ---- pages -----------------------------------------------------------------------------------------------

  page(query: PageQuery): Page {
    const order = this.orderOf(query.sort)
    const view = this.view(order, query)
    const signature = Collection.signature(query.sort)
    const mode = this.options.cursorMode()
    let start = 0
    if (query.offset !== undefined) start = Math.max(0, query.offset)
    else if (query.after !== undefined) start = this.startAfter(query.after, mode, signature, query.sort, order, view)
    const indices: Array<number> = []
    for (let k = start; k < view.count && indices.length < query.first; k++) indices.push(order.at(view.positionAt(k)))
    const rankOf = new Map(indices.map((index, k) => [index, start + k]))
    const cursorOf = (index: number): string =>
      mode === "offset"
        ? Buffer.from(String((rankOf.get(index) ?? 0) + 1)).toString("base64")
        : Buffer.from(JSON.stringify({ o: signature, v: query.sort.map((s) => this.source.sortValue(s.key, index)), i: index })).toString("base64url")
    return {
      indices,
      hasNextPage: start + indices.length < view.count,
      hasPreviousPage: start > 0 && view.count > 0,
      cursorOf,
      totalCount: () => view.count
    }
  }

  private startAfter(after: string, mode: CursorMode, signature: string, sort: ReadonlyArray<SortSpec>, order: Order, view: View): number {
    const rejected = () => new CursorRejected(`after: "${after.slice(0, 40)}" is not a cursor issued by this endpoint`)
    if (mode === "offset") {
      // graphql-ruby's offset cursors: the base64 of the row's 1-based position in the list as it is now
      const text = Buffer.from(after, "base64").toString("utf8")
      if (!/^\d+$/.test(text)) throw rejected()
      return Number(text)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.from(after, "base64url").toString("utf8"))
    } catch {
      throw rejected()
    }
    const c = parsed as { o?: unknown; v?: unknown; i?: unknown }
    if (typeof c !== "object" || c === null || typeof c.i !== "number" || !Number.isSafeInteger(c.i) || !Array.isArray(c.v) || c.v.length !== sort.length) throw rejected()
    if (c.o !== signature) throw new CursorRejected(`after: the cursor was issued for sort ${String(c.o)}, not ${signature}`)
    // the first position after the cursor's row in the order's total order (the row itself may be gone or moved)
    const cursorValues = c.v as Array<number | string>
    const cursorIndex = c.i
    const compare = (index: number): number => {
      for (let k = 0; k < sort.length; k++) {
        const x = this.source.sortValue(sort[k]!.key, index)
        const y = cursorValues[k]!
        const d = typeof x === "number" && typeof y === "number" ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0
        if (d !== 0) return sort[k]!.direction === "ASCENDING" ? d : -d
      }
      return index - cursorIndex
    }
    let lo = 0
    let hi = order.size
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (compare(order.at(mid)) > 0) hi = mid
      else lo = mid + 1
    }
    return view.countBefore(lo)
  }

  /** Live rows matching the query's filters (its totalCount). */
  count(query: Omit<PageQuery, "first" | "sort">): number {
    return this.view(this.naturalOrder(false), { ...query, sort: [], first: 0 }).count
  }
}

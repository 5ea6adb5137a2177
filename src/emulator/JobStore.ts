import type { JobRecord } from "./EmulatorAdmin.js"
import { decodeId } from "./Ids.js"
import {
  baseUpdatedMs, clientIndexOf, editedFields, generateClient, generateJob, jobInternalId, jobStatus, jobTotal, type JobSeedContext
} from "./JobGenerator.js"
import { sequence } from "./Prng.js"

/**
 * One account's jobs: generated lazily from seeded segments, with edits and deletions kept as overrides.
 * Pagination is keyset over a total order (sort keys, then job index), so cursors survive inserts.
 */

export type SortKey = "UPDATED_AT" | "JOB_NUMBER" | "TOTAL_COST" | "JOB_STATUS"
export const supportedSortKeys: ReadonlyArray<SortKey> = ["UPDATED_AT", "JOB_NUMBER", "TOTAL_COST", "JOB_STATUS"]
export interface SortSpec {
  readonly key: SortKey
  readonly direction: "ASCENDING" | "DESCENDING"
}

export interface CreatedRange {
  readonly afterMs?: number
  readonly beforeMs?: number
  readonly eqMs?: number
}

export interface PageQuery {
  readonly sort: ReadonlyArray<SortSpec>
  readonly first: number
  readonly after?: string
  /** Start at this position of the matching rows (0-based); `after` is ignored when given. */
  readonly offset?: number
  readonly created?: CreatedRange
  /** Only these job indices (an `ids` filter). */
  readonly only?: ReadonlySet<number>
}

export interface Page {
  readonly indices: ReadonlyArray<number>
  readonly hasNextPage: boolean
  readonly hasPreviousPage: boolean
  readonly cursorOf: (index: number) => string
}

/** A cursor that does not belong to this query (malformed, or issued for another sort). */
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
  /** No generated updatedAt is later than this (the time the segment was seeded). */
  readonly capMs: number
}

interface Override {
  readonly fields: Record<string, unknown>
  readonly updatedMs: number
}

const CLIENTS_PER_ACCOUNT = 997
const statusRank = (s: string): number => s.charCodeAt(0) * 65536 + s.charCodeAt(1) * 256 + s.charCodeAt(2)

export class JobStore {
  private readonly segments: Array<Segment> = []
  private size_ = 0
  private readonly overrides = new Map<number, Override>()
  private readonly deleted = new Set<number>()
  private readonly sortedCache = new Map<string, Int32Array>()

  constructor(
    private readonly ctx: JobSeedContext,
    private readonly accountCreatedMs: number
  ) {}

  get size(): number {
    return this.size_
  }

  get liveCount(): number {
    return this.size_ - this.deleted.size
  }

  /**
   * Appends `count` jobs. The first batch spreads creation over the two years before `nowMs`; later batches
   * are created between the newest existing job and now, so creation order = job number order always holds.
   */
  append(count: number, seed: number, nowMs: number): void {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be an integer >= 0, got ${count}`)
    if (count === 0) return
    const last = this.segments[this.segments.length - 1]
    const lastCreated = last ? this.createdMs(this.size_ - 1) : undefined
    const fromMs = lastCreated === undefined ? nowMs - 730 * 86_400_000 : Math.max(lastCreated, nowMs - count * 1000)
    const toMs = Math.max(fromMs, nowMs)
    this.segments.push({ start: this.size_, count, seed, fromMs, stepMs: (toMs - fromMs) / count, capMs: toMs })
    this.size_ += count
    this.sortedCache.clear()
  }

  private segmentOf(index: number): Segment {
    let lo = 0
    let hi = this.segments.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.segments[mid]!.start <= index) lo = mid
      else hi = mid - 1
    }
    return this.segments[lo]!
  }

  createdMs(index: number): number {
    const seg = this.segmentOf(index)
    return Math.floor((seg.fromMs + (index - seg.start) * seg.stepMs) / 1000) * 1000
  }

  updatedMs(index: number): number {
    const o = this.overrides.get(index)
    if (o) return o.updatedMs
    const seg = this.segmentOf(index)
    return baseUpdatedMs(seg.seed, index, this.createdMs(index), seg.capMs)
  }

  isLive(index: number): boolean {
    return index >= 0 && index < this.size_ && !this.deleted.has(index)
  }

  job(index: number): JobRecord {
    const seg = this.segmentOf(index)
    const base = generateJob({ ...this.ctx, seed: seg.seed }, index, this.createdMs(index), this.updatedMs(index))
    const o = this.overrides.get(index)
    return o ? { ...base, ...o.fields } : base
  }

  client(index: number): Record<string, unknown> {
    const c = clientIndexOf(this.ctx.seed, index, CLIENTS_PER_ACCOUNT)
    return generateClient(this.ctx, c, this.accountCreatedMs)
  }

  /** The job index of an EncodedId of this account, if it names a job that exists (live or not). */
  indexOfId(id: string): number | undefined {
    const n = decodeId("Job", id)
    if (n === undefined) return undefined
    const index = n - this.ctx.idBase - 1
    return index >= 0 && index < this.size_ ? index : undefined
  }

  jobId(index: number): string {
    return this.job(index).id
  }

  /** `count` distinct live job indices chosen by `seed`. */
  pickLive(count: number, seed: number): Array<number> {
    const want = Math.min(count, this.liveCount)
    const next = sequence(seed)
    const chosen = new Set<number>()
    let guard = 0
    while (chosen.size < want && guard++ < want * 50 + 1000) {
      const i = Math.floor(next() * this.size_)
      if (!this.deleted.has(i)) chosen.add(i)
    }
    // a dense fallback when random draws keep hitting deleted or chosen jobs
    for (let i = 0; chosen.size < want && i < this.size_; i++) if (!this.deleted.has(i)) chosen.add(i)
    return [...chosen].sort((a, b) => a - b)
  }

  edit(indices: ReadonlyArray<number>, editSeed: number, nowMs: number): void {
    for (const i of indices) {
      const seg = this.segmentOf(i)
      const prev = this.overrides.get(i)
      this.overrides.set(i, { fields: { ...prev?.fields, ...editedFields(seg.seed, i, editSeed) }, updatedMs: nowMs })
    }
    this.sortedCache.clear()
  }

  remove(indices: ReadonlyArray<number>): void {
    for (const i of indices) this.deleted.add(i)
  }

  liveIndices(): Array<number> {
    const out: Array<number> = []
    for (let i = 0; i < this.size_; i++) if (!this.deleted.has(i)) out.push(i)
    return out
  }

  private keyValue(key: SortKey, index: number): number {
    switch (key) {
      case "UPDATED_AT":
        return this.updatedMs(index)
      case "JOB_NUMBER":
        return index + 1
      case "TOTAL_COST": {
        const o = this.overrides.get(index)?.fields.total
        return typeof o === "number" ? o : jobTotal(this.segmentOf(index).seed, index)
      }
      case "JOB_STATUS": {
        const o = this.overrides.get(index)?.fields.jobStatus
        return statusRank(typeof o === "string" ? o : jobStatus(this.segmentOf(index).seed, index))
      }
    }
  }

  /** True when the order is plain job-number order (no index needed). */
  private static natural(sort: ReadonlyArray<SortSpec>): "ASCENDING" | "DESCENDING" | undefined {
    if (sort.length === 0) return "ASCENDING"
    if (sort.length === 1 && sort[0]!.key === "JOB_NUMBER") return sort[0]!.direction
    return undefined
  }

  private sorted(sort: ReadonlyArray<SortSpec>): Int32Array {
    const signature = sort.map((s) => `${s.key}:${s.direction}`).join(",")
    const cached = this.sortedCache.get(signature)
    if (cached) return cached
    const values = sort.map((s) => {
      const v = new Float64Array(this.size_)
      for (let i = 0; i < this.size_; i++) v[i] = this.keyValue(s.key, i)
      return v
    })
    const idx = new Int32Array(this.size_)
    for (let i = 0; i < this.size_; i++) idx[i] = i
    idx.sort((a, b) => {
      for (let k = 0; k < sort.length; k++) {
        const d = values[k]![a]! - values[k]![b]!
        if (d !== 0) return sort[k]!.direction === "ASCENDING" ? d : -d
      }
      return a - b
    })
    this.sortedCache.set(signature, idx)
    return idx
  }

  /** Index range [lo, hi) whose createdAt can match (createdAt is non-decreasing in job index). */
  private createdRange(created: CreatedRange | undefined): [number, number] {
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
    if (!created) return [lo, hi]
    if (created.afterMs !== undefined) lo = Math.max(lo, firstAtLeast(created.afterMs, true))
    if (created.beforeMs !== undefined) hi = Math.min(hi, firstAtLeast(created.beforeMs, false))
    if (created.eqMs !== undefined) {
      lo = Math.max(lo, firstAtLeast(created.eqMs, false))
      hi = Math.min(hi, firstAtLeast(created.eqMs, true))
    }
    return [lo, Math.max(lo, hi)]
  }

  /** Live jobs matching the createdAt range. */
  count(created: CreatedRange | undefined): number {
    const [lo, hi] = this.createdRange(created)
    if (lo === 0 && hi === this.size_) return this.liveCount
    let dead = 0
    for (const d of this.deleted) if (d >= lo && d < hi) dead++
    return hi - lo - dead
  }

  page(query: PageQuery): Page {
    const signature = query.sort.map((s) => `${s.key}:${s.direction}`).join(",") || "DEFAULT"
    const [lo, hi] = this.createdRange(query.created)
    const only = query.only
    const inRange = (i: number) => i >= lo && i < hi && !this.deleted.has(i) && (only === undefined || only.has(i))
    const cursorOf = (index: number): string =>
      Buffer.from(JSON.stringify({ o: signature, v: query.sort.map((s) => this.keyValue(s.key, index)), i: index })).toString("base64url")
    const after = query.after === undefined || query.offset !== undefined ? undefined : this.decodeCursor(query.after, signature, query.sort.length)

    // the order as a sequence of positions: at(p) is the job index at position p
    const natural = JobStore.natural(query.sort)
    let length: number
    let at: (p: number) => number
    let start: number
    if (natural === "ASCENDING") {
      length = hi - lo
      at = (p) => lo + p
      start = after ? Math.max(0, after.i + 1 - lo) : 0
    } else if (natural === "DESCENDING") {
      length = hi - lo
      at = (p) => hi - 1 - p
      start = after ? Math.max(0, hi - after.i) : 0
    } else {
      const idx = this.sorted(query.sort)
      length = idx.length
      at = (p) => idx[p]!
      start = after ? this.firstAfter(idx, query.sort, after) : 0
    }

    if (query.offset !== undefined) {
      start = 0
      for (let skipped = 0; start < length && skipped < query.offset; start++) if (inRange(at(start))) skipped++
    }
    const indices: Array<number> = []
    let p = start
    for (; p < length && indices.length < query.first; p++) {
      const i = at(p)
      if (inRange(i)) indices.push(i)
    }
    let hasNextPage = false
    for (; p < length; p++) {
      if (inRange(at(p))) {
        hasNextPage = true
        break
      }
    }
    let hasPreviousPage = false
    for (let q = Math.min(start, length) - 1; q >= 0; q--) {
      if (inRange(at(q))) {
        hasPreviousPage = true
        break
      }
    }
    return { indices, hasNextPage, hasPreviousPage, cursorOf }
  }

  private decodeCursor(cursor: string, signature: string, keys: number): { v: Array<number>; i: number } {
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    } catch {
      throw new CursorRejected(`after: "${cursor.slice(0, 40)}" is not a cursor issued by this endpoint`)
    }
    const c = parsed as { o?: unknown; v?: unknown; i?: unknown }
    if (
      typeof c !== "object" || c === null || typeof c.i !== "number" || !Number.isSafeInteger(c.i) || !Array.isArray(c.v) ||
      c.v.length !== keys || !c.v.every((x) => typeof x === "number")
    ) {
      throw new CursorRejected(`after: "${cursor.slice(0, 40)}" is not a cursor issued by this endpoint`)
    }
    if (c.o !== signature) throw new CursorRejected(`after: the cursor was issued for sort ${String(c.o)}, not ${signature}`)
    return { v: c.v as Array<number>, i: c.i }
  }

  /** First position in `idx` strictly after the cursor's (values, index) in the sort's total order. */
  private firstAfter(idx: Int32Array, sort: ReadonlyArray<SortSpec>, after: { v: Array<number>; i: number }): number {
    const cmpToCursor = (index: number): number => {
      for (let k = 0; k < sort.length; k++) {
        const d = this.keyValue(sort[k]!.key, index) - after.v[k]!
        if (d !== 0) return sort[k]!.direction === "ASCENDING" ? d : -d
      }
      return index - after.i
    }
    let lo = 0
    let hi = idx.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cmpToCursor(idx[mid]!) > 0) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  internalId(index: number): number {
    return jobInternalId(this.ctx, index)
  }
}

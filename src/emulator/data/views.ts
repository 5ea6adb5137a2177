import type { Order, SortSpec } from "./orders.js"

/** What a query selects of a collection, and the rows it selects in its order (a view). */

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

/** The rows a query selects in its order: how many, the k-th, and how many come before a position of the order. */
export interface View {
  readonly count: number
  readonly positionAt: (k: number) => number
  readonly countBefore: (position: number) => number
}

/** Index range [lo, hi) of `size` records whose creation time can match (creation time never decreases with the index). */
export const createdWindow = (created: TimeRange | undefined, size: number, createdMs: (index: number) => number): [number, number] => {
  const firstAtLeast = (ms: number, strict: boolean): number => {
    let lo = 0
    let hi = size
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const c = createdMs(mid)
      if (strict ? c > ms : c >= ms) hi = mid
      else lo = mid + 1
    }
    return lo
  }
  let lo = 0
  let hi = size
  if (created?.afterMs !== undefined) lo = Math.max(lo, firstAtLeast(created.afterMs, true))
  if (created?.beforeMs !== undefined) hi = Math.min(hi, firstAtLeast(created.beforeMs, false))
  if (created?.eqMs !== undefined) {
    lo = Math.max(lo, firstAtLeast(created.eqMs, false))
    hi = Math.min(hi, firstAtLeast(created.eqMs, true))
  }
  return [lo, Math.max(lo, hi)]
}

/**
 * The rows of `query` in `order`, the creation window [lo, hi) given: by positions when nothing but creation time
 * filters, else listed.
 */
export const viewOf = (order: Order, query: PageQuery, [lo, hi]: [number, number], size: number, isDeleted: (index: number) => boolean): View => {
  const inWindow = (i: number) => i >= lo && i < hi
  if (query.only === undefined && query.matches === undefined) {
    if (lo === 0 && hi === size) {
      const count = order.remaining.count(0, order.size)
      return { count, positionAt: (k) => order.remaining.kth(0, order.size, k), countBefore: (p) => order.remaining.count(0, Math.min(p, order.size)) }
    }
    if (order.ascendingCreation) {
      // ascending creation order: the window is a range of positions
      const count = order.remaining.count(lo, hi)
      return { count, positionAt: (k) => order.remaining.kth(lo, hi, k), countBefore: (p) => order.remaining.count(lo, Math.max(lo, Math.min(p, hi))) }
    }
  }
  const matches = (i: number) => !isDeleted(i) && inWindow(i) && (query.matches === undefined || query.matches(i))
  let positions: Int32Array
  if (query.only !== undefined) {
    positions = Int32Array.from([...query.only].filter((i) => i < size && matches(i)).map((i) => order.positionOf(i))).sort()
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

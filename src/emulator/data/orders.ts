import { Remaining } from "./Fenwick.js"

/**
 * The orders a collection lists its rows in: creation order, or sorted by the collection's sort keys (each a total
 * order, the creation index breaking ties), with the positions still live.
 */

export interface SortSpec {
  readonly key: string
  readonly direction: "ASCENDING" | "DESCENDING"
}

export interface Order {
  /** The index at a position. */
  readonly at: (position: number) => number
  /** The position of an index. */
  readonly positionOf: (index: number) => number
  readonly remaining: Remaining
  readonly size: number
  /** Positions are indices (creation order, ascending). */
  readonly ascendingCreation: boolean
}

/** What names an order (in caches and keyset cursors). */
export const orderSignature = (sort: ReadonlyArray<SortSpec>): string => sort.map((s) => `${s.key}:${s.direction}`).join(",") || "DEFAULT"

/** Numbers compare as numbers, anything else as strings. */
const compareValues = (x: number | string, y: number | string): number =>
  typeof x === "number" && typeof y === "number" ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0

/** Sort values in `sort`'s directions: the first key that differs decides (0 when none does). */
export const compareSorted = (sort: ReadonlyArray<SortSpec>, x: (k: number) => number | string, y: (k: number) => number | string): number => {
  for (let k = 0; k < sort.length; k++) {
    const d = compareValues(x(k), y(k))
    if (d !== 0) return sort[k]!.direction === "ASCENDING" ? d : -d
  }
  return 0
}

/** Indices 0..size-1 in creation order, newest first when `descending`. */
export const creationOrder = (size: number, remaining: Remaining, descending: boolean): Order =>
  descending
    ? { at: (p) => size - 1 - p, positionOf: (i) => size - 1 - i, remaining, size, ascendingCreation: false }
    : { at: (p) => p, positionOf: (i) => i, remaining, size, ascendingCreation: true }

/** The `size` indices sorted by `sort` (the index breaking ties), the `deleted` ones not remaining. */
export const sortedOrder = (
  sort: ReadonlyArray<SortSpec>,
  size: number,
  sortValue: (key: string, index: number) => number | string,
  deleted: Iterable<number>
): Order => {
  const values = sort.map((s) => Array.from({ length: size }, (_, i) => sortValue(s.key, i)))
  const idx = new Int32Array(size)
  for (let i = 0; i < size; i++) idx[i] = i
  idx.sort((a, b) => {
    const d = compareSorted(sort, (k) => values[k]![a]!, (k) => values[k]![b]!)
    return d !== 0 ? d : a - b
  })
  const inverse = new Int32Array(size)
  for (let p = 0; p < size; p++) inverse[idx[p]!] = p
  const remaining = new Remaining(size)
  for (const d of deleted) remaining.remove(inverse[d]!)
  return { at: (p) => idx[p]!, positionOf: (i) => inverse[i]!, remaining, size, ascendingCreation: false }
}

/** The first position of `order` after a row with these sort values and index (the row itself may be gone or moved). */
export const positionAfter = (
  order: Order,
  sort: ReadonlyArray<SortSpec>,
  sortValue: (key: string, index: number) => number | string,
  row: { readonly values: ReadonlyArray<number | string>; readonly index: number }
): number => {
  const compare = (index: number) => {
    const d = compareSorted(sort, (k) => sortValue(sort[k]!.key, index), (k) => row.values[k]!)
    return d !== 0 ? d : index - row.index
  }
  let lo = 0
  let hi = order.size
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (compare(order.at(mid)) > 0) hi = mid
    else lo = mid + 1
  }
  return lo
}

/**
 * How a pass pages exactly while the list moves under it. The service's cursors are opaque and may be offsets, so a
 * deletion behind the pass shifts every later row one place back and a naive pager skips a row. A pass pages by
 * position instead, and each page starts one row before where the last one ended: the page must contain a row the
 * pass already landed (its "join"), and everything after that row is new. A page that does not join (rows behind the
 * pass were deleted) is thrown away and asked again further back, until it joins. Rows that keep existing keep their
 * relative order (the pass's order is by a key that does not change, or moves edited rows in a way the join follows),
 * so joining on the last landed row leaves no gap, whatever the cursors are.
 */

/** How many rows before the end of the landed rows a page starts (the join needs one landed row in the page). */
export const overlapRows = 1

/** The ids a pass landed most recently, in list order: the rows a page may join on. Bounded. */
export class RecentIds {
  private readonly order: Array<string> = []
  private readonly set = new Set<string>()

  constructor(
    private readonly capacity: number,
    initial: ReadonlyArray<string> = []
  ) {
    this.add(initial)
  }

  add(ids: ReadonlyArray<string>): void {
    for (const id of ids) {
      if (this.set.has(id)) continue
      this.order.push(id)
      this.set.add(id)
    }
    while (this.order.length > this.capacity) this.set.delete(this.order.shift()!)
  }

  has(id: string): boolean {
    return this.set.has(id)
  }

  /** The most recent ones, oldest first: what a checkpoint keeps for a resumed pass. */
  last(n: number): ReadonlyArray<string> {
    return this.order.slice(-n)
  }

  get size(): number {
    return this.order.length
  }
}

export type Join =
  /** Rows after `at` are new; `at` is -1 on a pass's first page (nothing to join). */
  | { readonly _tag: "Joined"; readonly at: number; readonly shifted: boolean }
  /** No landed row in the page: the list moved behind the pass; ask again further back. */
  | { readonly _tag: "Lost" }

/**
 * Where the page requested at `offset` joins the rows landed so far: the last row of the page the pass already landed.
 * A page asked from the start joins trivially (everything before it is nothing, or gone). `shifted`: the join is not
 * where it would be had nothing moved (the landed row at the page's first place).
 */
export const joinPage = (ids: ReadonlyArray<string>, recent: RecentIds, offset: number): Join => {
  for (let j = ids.length - 1; j >= 0; j--) {
    if (recent.has(ids[j]!)) return { _tag: "Joined", at: j, shifted: j !== overlapRows - 1 || offset === 0 }
  }
  if (offset === 0) return { _tag: "Joined", at: -1, shifted: recent.size > 0 }
  return { _tag: "Lost" }
}

/** Where to ask again after the page at `offset` did not join: a page further back per attempt, doubling. */
export const stepBack = (offset: number, first: number, attempt: number): number =>
  Math.max(0, offset - first * 2 ** Math.min(attempt, 20))

/** Where a pass that has landed up to `position` asks its next page. */
export const nextOffset = (position: number): number => Math.max(0, position - overlapRows)

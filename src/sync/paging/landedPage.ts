import type { Place } from "./place.js"
import type { Page, ReceivedNode } from "../model.js"

/** What the walk said of a page that joined (see Continuation's Verdict). */
export interface Joined {
  readonly newFrom: number
  readonly shifted: boolean
  readonly checked: boolean
}

/** A page as fetched (fetchPage), what of it lands. */
export interface Answered {
  readonly nodes: ReadonlyArray<ReceivedNode>
  readonly body: Uint8Array | undefined
  readonly costPoints: number
  readonly fetchedAtMs: number
}

/**
 * The page a pass is given. `position`: the positions of the partition paged once it is (the walk's); `wasted`: points
 * of answers thrown away to find its join. Its overhead is those, and the share of its own points spent on the rows
 * before `newFrom` (read again to join).
 */
export const landedPage = (input: {
  readonly partition: number
  readonly place: Place
  readonly first: number
  readonly page: Answered
  readonly verdict: Joined
  readonly position: number
  readonly wasted: number
  /** The partition's list continues, or another partition follows. */
  readonly mayHaveMore: boolean
}): Page => {
  const { page, verdict, first, place, position } = input
  const reread = page.nodes.length > 0 ? (page.costPoints * verdict.newFrom) / page.nodes.length : 0
  return {
    partition: input.partition,
    offset: place._tag === "Offset" ? place.offset : position - first,
    first,
    nodes: page.nodes,
    newFrom: verdict.newFrom,
    position,
    mayHaveMore: input.mayHaveMore,
    body: page.body,
    shifted: verdict.shifted,
    checked: verdict.checked,
    costPoints: page.costPoints,
    fetchedAtMs: page.fetchedAtMs,
    overheadPoints: input.wasted + reread
  }
}

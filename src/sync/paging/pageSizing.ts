import type { ChildDefinition } from "../streams/Stream.js"

/** The fewest parents a page should carry: below it, children are asked fewer per parent (and followed up). */
export const minParentsPerPage = 10

/** The largest page of a list: the stream's, but none larger than the list can hold (a lookup of n ids: n), at least 1. */
export const largestPage = (maxPageSize: number, atMost: number | undefined): number =>
  atMost === undefined ? maxPageSize : Math.max(1, Math.min(maxPageSize, atMost))

/** A list that holds at most `atMost` rows ends once `position` positions of it were paged: no page is asked past it. */
export const listEnds = (atMost: number | undefined, position: number): boolean => atMost !== undefined && position >= atMost

/**
 * After the budget sized a page at `first` rows with `inner` children per row: undefined when that size stands (enough
 * parents, or no child asked more than one per row), else each child's inner page halved (down to 1), to size again.
 */
export const smallerInner = (
  first: number,
  inner: ReadonlyMap<ChildDefinition, number>,
  largest: number
): ReadonlyMap<ChildDefinition, number> | undefined => {
  const shrinkable = [...inner].some(([, k]) => k > 1)
  if (first >= Math.min(minParentsPerPage, largest) || !shrinkable) return undefined
  return new Map([...inner].map(([child, k]) => [child, k > 1 ? Math.max(1, Math.floor(k / 2)) : k] as const))
}

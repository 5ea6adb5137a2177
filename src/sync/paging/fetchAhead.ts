import type { Place } from "./place.js"
import type { ChildDefinition } from "../streams/Stream.js"
import { listEnds } from "./pageSizing.js"

/**
 * When the page after the one being asked is fetched at the same time (one request more in flight: the service
 * prepares it while this one is read and checked). Nothing about a page changes by being fetched early; one fetched
 * where the walk then does not ask (a short page, a page asked again, the end of the list) is dropped unused.
 */

/** Where a page is asked, with what sizes. */
export interface Asked {
  readonly place: Place
  readonly first: number
  readonly inner: ReadonlyMap<ChildDefinition, number>
}

/**
 * Where to fetch ahead while a page is asked: only on its first ask, only after a full page (`lastFull`), only where
 * the walk's guess of its next page is an offset (`Walk.nextIfFull`), and never past the end of a list of `atMost` rows.
 * The bucket must have room too (hasRoomAhead).
 */
export const aheadPlace = (input: {
  readonly asks: number
  readonly lastFull: boolean
  readonly guess: Place | undefined
  readonly atMost: number | undefined
}): Place | undefined => {
  const { guess } = input
  if (input.asks !== 0 || !input.lastFull || guess === undefined || guess._tag !== "Offset") return undefined
  return listEnds(input.atMost, guess.offset) ? undefined : guess
}

/**
 * Whether the account's bucket, as mirrored, holds the points of two pages. The mirror is set from each answer, which
 * does not count the page still in flight; with two pages' points there, the page in flight and the one asked ahead
 * both fit, so fetching ahead never draws a THROTTLED answer. Where the bucket binds (or is not known yet), pages are
 * asked one at a time: the points, not the round trips, set the pace.
 */
export const hasRoomAhead = (available: number | undefined, pageCost: number): boolean => available !== undefined && available >= 2 * pageCost

export const samePlace = (a: Place, b: Place): boolean =>
  a._tag === "Offset" ? b._tag === "Offset" && a.offset === b.offset : b._tag === "After" && a.after === b.after

const sameSizes = (a: ReadonlyMap<ChildDefinition, number>, b: ReadonlyMap<ChildDefinition, number>) => {
  if (a.size !== b.size) return false
  for (const [child, k] of a) if (b.get(child) !== k) return false
  return true
}

/** A page fetched ahead is used only if the walk asks exactly there with exactly its sizes. */
export const sameAsk = (ahead: Asked, asked: Asked): boolean =>
  samePlace(ahead.place, asked.place) && ahead.first === asked.first && sameSizes(ahead.inner, asked.inner)

/**
 * After a page joined: whether its partition's list continues (the service's `hasNextPage`, short of the list's
 * `atMost`), and whether the next page is fetched ahead (this one came back full: a short page, rows left out, makes
 * the next place unknowable before its answer).
 */
export const afterJoin = (input: {
  readonly hasNextPage: boolean
  readonly held: number
  readonly first: number
  readonly position: number
  readonly atMost: number | undefined
}): { readonly continues: boolean; readonly full: boolean } => {
  const continues = input.hasNextPage && !listEnds(input.atMost, input.position)
  return { continues, full: continues && input.held === input.first }
}

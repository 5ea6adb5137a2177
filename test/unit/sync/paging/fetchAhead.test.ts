import { describe, expect, it } from "@effect/vitest"
import { afterCursor, atOffset, type Place } from "../../../../src/sync/paging/place.js"
import { afterJoin, aheadPlace, hasRoomAhead, sameAsk, samePlace } from "../../../../src/sync/paging/fetchAhead.js"
import type { ChildDefinition } from "../../../../src/sync/streams/Stream.js"

/** Children are told apart by identity only here. */
const child = (field: string) => ({ field, firstVariable: `${field}First`, innerPage: 20 }) as unknown as ChildDefinition
const lineItems = child("lineItems")
const visits = child("visits")

describe("where a page is fetched ahead", () => {
  it.each<[string, number, boolean, Place | undefined, number | undefined, Place | undefined]>([
    // [case, asks, lastFull, the walk's guess, atMost, fetched ahead at]
    ["a first ask after a full page", 0, true, atOffset(199), undefined, atOffset(199)],
    ["the start of the list", 0, true, atOffset(0), undefined, atOffset(0)],
    ["a page asked again", 1, true, atOffset(199), undefined, undefined],
    ["the last of the re-asks", 10, true, atOffset(199), undefined, undefined],
    ["after a short page (rows left out, hasNextPage true)", 0, false, atOffset(199), undefined, undefined],
    ["after a whole empty page", 0, false, atOffset(199), undefined, undefined],
    ["no guess (after a re-anchor or a step back)", 0, true, undefined, undefined, undefined],
    ["paging after cursors", 0, true, afterCursor("c-99"), undefined, undefined],
    ["paging after cursors from the start", 0, true, afterCursor(null), undefined, undefined],
    ["a lookup of 300 ids, the guess inside it", 0, true, atOffset(299), 300, atOffset(299)],
    ["a lookup of 300 ids, the guess at its end", 0, true, atOffset(300), 300, undefined],
    ["a lookup of 300 ids, the guess past its end", 0, true, atOffset(350), 300, undefined],
    ["a lookup of 0 ids", 0, true, atOffset(0), 0, undefined]
  ])("%s", (_, asks, lastFull, guess, atMost, expected) => {
    expect(aheadPlace({ asks, lastFull, guess, atMost })).toEqual(expected)
  })
})

describe("room in the bucket for the page in flight and the one ahead", () => {
  it.each<[number | undefined, number, boolean]>([
    // [available points, a page's estimate, room]
    [undefined, 10, false], // no answer yet: the bucket is not known
    [undefined, 0, false],
    [0, 0, true],
    [1000, 500, true], // exactly two pages
    [999, 500, false],
    [999.9, 500, false],
    [10_000, 102, true],
    [150, 102, false], // one page fits, two do not: one at a time
    [-5, 1, false] // the mirror owes points
  ])("%s points available, a page of %d: %s", (available, cost, room) => {
    expect(hasRoomAhead(available, cost)).toBe(room)
  })
})

describe("the page fetched ahead is used only where it was asked, with its sizes", () => {
  const inner = new Map([
    [lineItems, 20],
    [visits, 5]
  ])
  const ahead = { place: atOffset(199), first: 200, inner }
  it.each<[string, { readonly place: Place; readonly first: number; readonly inner: ReadonlyMap<ChildDefinition, number> }, boolean]>([
    ["the same place and sizes", { place: atOffset(199), first: 200, inner: new Map(inner) }, true],
    ["the same sizes in another order", { place: atOffset(199), first: 200, inner: new Map([[visits, 5], [lineItems, 20]]) }, true],
    ["another offset", { place: atOffset(198), first: 200, inner }, false],
    ["a smaller page (the bucket emptied)", { place: atOffset(199), first: 150, inner }, false],
    ["a halved inner page", { place: atOffset(199), first: 200, inner: new Map([[lineItems, 10], [visits, 5]]) }, false],
    ["a child less", { place: atOffset(199), first: 200, inner: new Map([[lineItems, 20]]) }, false],
    ["another child of the same size", { place: atOffset(199), first: 200, inner: new Map([[lineItems, 20], [child("visits"), 5]]) }, false],
    ["after a cursor", { place: afterCursor("199"), first: 200, inner }, false]
  ])("%s: %s", (_, asked, used) => {
    expect(sameAsk(ahead, asked)).toBe(used)
  })

  it.each<[Place, Place, boolean]>([
    [afterCursor(null), afterCursor(null), true],
    [afterCursor("x"), afterCursor("x"), true],
    [afterCursor("x"), afterCursor(null), false],
    [atOffset(0), afterCursor(null), false],
    [afterCursor(null), atOffset(0), false],
    [atOffset(0), atOffset(0), true]
  ])("%j and %j are the same place: %s", (a, b, same) => {
    expect(samePlace(a, b)).toBe(same)
  })
})

describe("after a page joined: does the list continue, is the next page fetched ahead", () => {
  it.each<[string, boolean, number, number, number, number | undefined, boolean, boolean]>([
    // [case, hasNextPage, held, first, position, atMost, continues, full]
    ["a full page, more follow", true, 200, 200, 400, undefined, true, true],
    ["a short page while more follow (rows left out)", true, 150, 200, 400, undefined, true, false],
    ["a whole empty page while more follow", true, 0, 200, 400, undefined, true, false],
    ["one row short", true, 199, 200, 400, undefined, true, false],
    ["the last page, full", false, 200, 200, 400, undefined, false, false],
    ["the last page, short", false, 12, 200, 212, undefined, false, false],
    ["the last page, empty", false, 0, 200, 0, undefined, false, false],
    ["a lookup paged to its end though the service says more", true, 100, 100, 300, 300, false, false],
    ["a lookup paged past its end", true, 100, 100, 350, 300, false, false],
    ["a lookup short of its end", true, 100, 100, 200, 300, true, true],
    ["a lookup of 0 ids", true, 0, 1, 1, 0, false, false]
  ])("%s", (_, hasNextPage, held, first, position, atMost, continues, full) => {
    expect(afterJoin({ hasNextPage, held, first, position, atMost })).toEqual({ continues, full })
  })
})

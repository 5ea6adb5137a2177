import { describe, expect, it } from "@effect/vitest"
import { atOffset, afterCursor } from "../../../../src/sync/paging/place.js"
import { pageVariables } from "../../../../src/sync/paging/pageVariables.js"
import { largestPage, listEnds, minParentsPerPage, smallerInner } from "../../../../src/sync/paging/pageSizing.js"
import type { ChildDefinition } from "../../../../src/sync/streams/Stream.js"

const child = (field: string) => ({ field, firstVariable: `${field}First`, innerPage: 20 }) as unknown as ChildDefinition
const lineItems = child("lineItems")
const visits = child("visits")
const sizes = (inner: ReadonlyMap<ChildDefinition, number> | undefined) => (inner === undefined ? undefined : [...inner].map(([c, k]) => [c.field, k]))

describe("the largest page of a list", () => {
  it.each<[number, number | undefined, number]>([
    // [the stream's largest, atMost, largest page]
    [100, undefined, 100],
    [100, 1000, 100],
    [100, 100, 100],
    [100, 37, 37], // a lookup of 37 ids
    [100, 1, 1],
    [100, 0, 1], // a page is at least one row
    [100, -3, 1]
  ])("stream's %i, atMost %s: %i", (max, atMost, largest) => {
    expect(largestPage(max, atMost)).toBe(largest)
  })

  it.each<[number | undefined, number, boolean]>([
    [undefined, 1_000_000, false],
    [300, 299, false],
    [300, 300, true],
    [300, 301, true],
    [0, 0, true]
  ])("a list of at most %s rows, %i positions paged: ended %s", (atMost, position, ended) => {
    expect(listEnds(atMost, position)).toBe(ended)
  })
})

describe("the inner pages of a page the budget sized", () => {
  const both = new Map([
    [lineItems, 20],
    [visits, 5]
  ])
  it.each<[string, number, ReadonlyMap<ChildDefinition, number>, number, ReadonlyArray<[string, number]> | undefined]>([
    // [case, first the budget allows, inner, largest, inner to size again with (undefined: the size stands)]
    ["enough parents", 100, both, 100, undefined],
    ["exactly the fewest parents", minParentsPerPage, both, 100, undefined],
    ["one parent short: every child halved", minParentsPerPage - 1, both, 100, [["lineItems", 10], ["visits", 2]]],
    ["one row: halved", 1, both, 100, [["lineItems", 10], ["visits", 2]]],
    ["none fits (first 0): halved", 0, both, 100, [["lineItems", 10], ["visits", 2]]],
    ["a child at 1 stays at 1, the other halves", 3, new Map([[lineItems, 1], [visits, 3]]), 100, [["lineItems", 1], ["visits", 1]]],
    ["every child at 1: the size stands, however small", 2, new Map([[lineItems, 1], [visits, 1]]), 100, undefined],
    ["no children", 1, new Map(), 100, undefined],
    ["a lookup of 5 ids: 5 parents are all there are", 5, both, 5, undefined],
    ["a lookup of 5 ids, 4 fit", 4, both, 5, [["lineItems", 10], ["visits", 2]]],
    ["odd sizes round down", 2, new Map([[lineItems, 7]]), 100, [["lineItems", 3]]]
  ])("%s", (_, first, inner, largest, expected) => {
    expect(sizes(smallerInner(first, inner, largest))).toEqual(expected)
  })

  it("halving from 20 reaches 1 in five steps and then stands", () => {
    const steps: Array<number> = []
    for (let inner: ReadonlyMap<ChildDefinition, number> | undefined = new Map([[lineItems, 20]]); inner !== undefined; inner = smallerInner(1, inner, 100)) {
      steps.push(inner.get(lineItems)!)
    }
    expect(steps).toEqual([20, 10, 5, 2, 1])
  })
})

describe("a page's variables", () => {
  it.each([
    [atOffset(40), 100, new Map([[lineItems, 20]]), { filter: { status: "open" }, first: 100, offset: 40, lineItemsFirst: 20 }],
    [afterCursor("c-9"), 50, new Map(), { filter: { status: "open" }, first: 50, after: "c-9" }],
    [afterCursor(null), 1, new Map([[lineItems, 1], [visits, 3]]), { filter: { status: "open" }, first: 1, after: null, lineItemsFirst: 1, visitsFirst: 3 }]
  ] as const)("at %j, %i rows", (place, first, inner, expected) => {
    expect(pageVariables({ filter: { status: "open" } }, place, first, inner)).toEqual(expected)
  })
})

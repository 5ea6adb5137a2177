import { describe, expect, it } from "@effect/vitest"
import { afterCursor, atOffset, type Place } from "../../../../src/sync/paging/place.js"
import { type Answered, landedPage } from "../../../../src/sync/paging/landedPage.js"

const answer = (rows: number, costPoints: number): Answered => ({
  nodes: Array.from({ length: rows }, (_, i) => ({ node: { id: `job-${i}` }, raw: { id: `job-${i}` } })),
  body: undefined,
  costPoints,
  fetchedAtMs: 42
})

describe("the page a pass is given", () => {
  it.each<[string, Place, number, number, number, number, number, number, number, number]>([
    // [case, place, first, rows held, points, newFrom, position, wasted, offset, overhead points]
    ["a first page", atOffset(0), 100, 100, 102, 0, 100, 0, 0, 0],
    ["a page that read one row again to join", atOffset(99), 100, 100, 102, 1, 199, 0, 99, 1.02],
    ["a short page (rows left out)", atOffset(99), 100, 50, 102, 1, 199, 0, 99, 2.04],
    ["a whole empty page: nothing re-read", atOffset(199), 100, 0, 102, 0, 299, 0, 199, 0],
    ["joined after answers thrown away", atOffset(50), 100, 100, 102, 50, 150, 204, 50, 255],
    ["every row read again", atOffset(99), 100, 10, 20, 10, 199, 0, 99, 20],
    ["after a cursor: its offset is the positions paged before it", afterCursor("c-9"), 100, 100, 102, 1, 300, 0, 200, 1.02],
    ["after a cursor from the start", afterCursor(null), 100, 40, 60, 0, 100, 30, 0, 30]
  ])("%s", (_, place, first, rows, points, newFrom, position, wasted, offset, overhead) => {
    const page = landedPage({ partition: 2, place, first, page: answer(rows, points), verdict: { newFrom, shifted: wasted > 0, checked: true }, position, wasted, mayHaveMore: true })
    expect(page).toMatchObject({ partition: 2, offset, first, newFrom, position, costPoints: points, fetchedAtMs: 42, shifted: wasted > 0, checked: true, mayHaveMore: true })
    expect(page.nodes).toHaveLength(rows)
    expect(page.overheadPoints).toBeCloseTo(overhead, 10)
  })

  it.each([true, false])("carries whether more may follow (%s) and an unchecked page as unchecked", (mayHaveMore) => {
    const page = landedPage({ partition: 0, place: atOffset(10), first: 10, page: answer(3, 5), verdict: { newFrom: 0, shifted: true, checked: false }, position: 20, wasted: 0, mayHaveMore })
    expect(page).toMatchObject({ mayHaveMore, checked: false, shifted: true, overheadPoints: 0 })
  })
})

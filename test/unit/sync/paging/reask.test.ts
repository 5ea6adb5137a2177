import { describe, expect, it } from "@effect/vitest"
import { reaskLimit } from "../../../../src/sync/paging/Continuation.js"
import { afterCursor, atOffset } from "../../../../src/sync/paging/place.js"
import { answered, askAgain, type Asking, firstAsk, nextAsk, pointsBound } from "../../../../src/sync/paging/reask.js"

/** An asking state after `asks` asks that threw away `wasted` points, the last at `offset`. */
const asking = (asks: number, wasted: number, options: { readonly answers?: ReadonlyArray<string>; readonly offset?: number; readonly why?: string } = {}): Asking => ({
  firstPlace: atOffset(500),
  place: atOffset(options.offset ?? 500),
  asks,
  wasted,
  why: options.why ?? "no row of the page was landed before",
  answers: new Set(options.answers ?? [])
})

describe("the re-ask bound: asks > reaskLimit || wasted > pointsBound", () => {
  const bound = pointsBound(102) // a full page estimated at 102 points
  it.each([
    // [asks, wasted, asked again?]
    [0, 0, true],
    [1, 102, true],
    [reaskLimit - 1, 0, true],
    [reaskLimit, 0, true], // the last re-ask: reaskLimit + 1 asks in all
    [reaskLimit + 1, 0, false],
    [reaskLimit + 5, 0, false],
    [0, bound, true], // exactly the bound is still within it
    [3, bound, true],
    [3, bound + 0.5, false], // the points bound binds before the ask count
    [1, bound * 2, false],
    [reaskLimit, bound, true],
    [reaskLimit + 1, bound + 1, false]
  ] as const)("after %i asks and %d points thrown away: asked again %s", (asks, wasted, again) => {
    expect(nextAsk(asking(asks, wasted), bound)._tag).toBe(again ? "Ask" : "Stuck")
  })

  it("a page whose full size costs nothing is asked again until something is thrown away or the asks run out", () => {
    expect(pointsBound(0)).toBe(0)
    expect(nextAsk(asking(4, 0), 0)._tag).toBe("Ask")
    expect(nextAsk(asking(1, 0.01), 0)._tag).toBe("Stuck")
  })

  it("the bound is reaskLimit full pages of points", () => {
    expect(pointsBound(102)).toBe(reaskLimit * 102)
    expect(pointsBound(2.5)).toBe(reaskLimit * 2.5)
  })
})

describe("what a stuck page says", () => {
  const bound = pointsBound(10)
  it.each([
    // [answers, asks, says the answers were the same?]
    [["a,b,c"], 11, true],
    [["a,b,c"], 1, false], // one ask: nothing to compare
    [["a,b,c", "d,e,f"], 11, false],
    [[], 11, false], // every answer was a follow-up that found its parent moved
    [["a,b,c"], 2, true]
  ] as const)("answers %j after %i asks: the same rows %s", (answers, asks, same) => {
    const verdict = nextAsk(asking(asks, bound + 1, { answers }), bound)
    expect(verdict._tag).toBe("Stuck")
    if (verdict._tag !== "Stuck") return
    expect(verdict.detail.includes("every answer held the same rows")).toBe(same)
  })

  it("names where the page was asked first and last, the asks, the points (rounded) and the last reason", () => {
    const verdict = nextAsk(asking(11, 1234.6, { offset: 0, why: "the last rows of the page before were left out" }), 10_000)
    expect(verdict).toEqual({
      _tag: "Stuck",
      detail:
        "asked 11 times, from offset 500 back to offset 0, 1235 points spent, and the page never joined the rows landed (last: the last rows of the page before were left out): the list keeps moving under the pass"
    })
  })
})

describe("the asks of a page", () => {
  it("start at the walk's place with nothing spent", () => {
    const start = firstAsk(afterCursor(null))
    expect(start).toMatchObject({ firstPlace: afterCursor(null), place: afterCursor(null), asks: 0, wasted: 0, why: "" })
    expect(nextAsk(start, 0)._tag).toBe("Ask")
  })

  it.each([
    // [spent, why given, why after]
    [12, "moved", "moved"],
    [0, "moved", "moved"], // a follow-up that found its parent moved before spending anything
    [7.5, undefined, "before"] // the service ignores offset: the reason stays the last one
  ] as const)("asked again after %d points (why %s): the count, the points and the reason", (spent, why, after) => {
    const again = askAgain(asking(2, 10, { why: "before" }), atOffset(100), spent, why)
    expect(again).toMatchObject({ firstPlace: atOffset(500), place: atOffset(100), asks: 3, wasted: 10 + spent, why: after })
  })

  it.each([
    // [ids of each answer, distinct answers]
    [[["a", "b", "c", "d"], ["a", "b", "c", "x"]], 1], // the first three ids name an answer
    [[["a", "b"], ["a", "b"]], 1], // short pages
    [[[], []], 1], // whole empty pages: the same (nothing) each time
    [[["a"], ["b"]], 2],
    [[[], ["a"]], 2]
  ] as const)("answers %j are %i distinct", (answers, distinct) => {
    const seen = answers.reduce((s, ids) => answered(s, ids), firstAsk(atOffset(0)))
    expect(seen.answers.size).toBe(distinct)
    expect(seen.asks).toBe(0) // an answer alone is not an ask
  })

  it("a page asked again and again without ever joining is stuck at the (reaskLimit + 2)th ask at the latest", () => {
    let s = firstAsk(atOffset(1000))
    let asks = 0
    while (nextAsk(s, Number.POSITIVE_INFINITY)._tag === "Ask") {
      asks++
      s = askAgain(answered(s, ["same"]), atOffset(0), 1)
    }
    expect(asks).toBe(reaskLimit + 1)
    expect(nextAsk(s, Number.POSITIVE_INFINITY)).toMatchObject({ _tag: "Stuck" })
    const stuck = nextAsk(s, Number.POSITIVE_INFINITY)
    expect(stuck._tag === "Stuck" && stuck.detail.endsWith("every answer held the same rows, wherever the page was asked")).toBe(true)
  })
})

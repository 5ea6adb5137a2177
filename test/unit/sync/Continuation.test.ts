import { describe, expect, it } from "@effect/vitest"
import { joinPage, nextOffset, RecentIds, stepBack } from "../../../src/sync/Continuation.js"

/** A tiny seeded generator (mulberry32): the same churn for the same seed. */
const random = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * A pass over a list that changes between pages, with the pager's own rules: request from nextOffset(position),
 * join, step back when lost. Returns the ids landed, the ids that existed for the whole pass, and the steps back.
 */
const pass = (options: {
  readonly size: number
  readonly first: number
  readonly seed: number
  readonly churn: (list: Array<string>, position: number, next: () => number, counter: { n: number; moved: Set<string> }) => void
}) => {
  const next = random(options.seed)
  const counter = { n: options.size, moved: new Set<string>() }
  const settle = () => {
    const alive = new Set(list)
    for (const id of existedAll) if (!alive.has(id) || counter.moved.has(id)) existedAll.delete(id)
  }
  let list = Array.from({ length: options.size }, (_, i) => `r${i}`)
  const existedAll = new Set(list)
  const landed = new Set<string>()
  const recent = new RecentIds(500)
  let position = 0
  let stepsBack = 0
  for (let pages = 0; pages < 10_000; pages++) {
    options.churn(list, position, next, counter)
    settle()
    let offset = nextOffset(position)
    let attempt = 0
    let page = list.slice(offset, offset + options.first)
    let join = joinPage(page, recent, offset)
    while (join._tag === "Lost") {
      stepsBack++
      offset = stepBack(offset, options.first, attempt++)
      options.churn(list, offset, next, counter)
      settle()
      page = list.slice(offset, offset + options.first)
      join = joinPage(page, recent, offset)
    }
    for (const id of page.slice(join.at + 1)) landed.add(id)
    recent.add(page)
    position = offset + page.length
    if (page.length < options.first) break
  }
  list = []
  return { landed, existedAll, stepsBack }
}

const deleteAt = (list: Array<string>, i: number) => list.splice(Math.max(0, Math.min(list.length - 1, i)), 1)

describe("paging by position with a join", () => {
  it("an unchanging list is read once, each page joining on the last row of the one before", () => {
    const r = pass({ size: 1000, first: 100, seed: 1, churn: () => {} })
    expect(r.landed.size).toBe(1000)
    expect(r.stepsBack).toBe(0)
  })

  it("deletions behind the pass (the offset-cursor skip) lose no row that existed throughout", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = pass({
        size: 2000,
        first: 100,
        seed,
        churn: (list, position, next) => {
          for (let k = 0; k < 3; k++) deleteAt(list, Math.floor(next() * Math.max(1, position)))
        }
      })
      for (const id of r.existedAll) expect(r.landed.has(id), `seed ${seed}: ${id}`).toBe(true)
      expect(r.stepsBack).toBeGreaterThan(0)
    }
  })

  // a row that moves (an edit in newest-first order) is the next pass's: its updatedAt is newer than this pass's mark
  it("deletions and creates anywhere, and rows moving to the top (an edit in newest-first order), lose no unchanged row", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = pass({
        size: 1500,
        first: 40,
        seed,
        churn: (list, position, next, counter) => {
          const n = Math.floor(next() * 6)
          for (let k = 0; k < n; k++) {
            const draw = next()
            if (draw < 0.3) deleteAt(list, Math.floor(next() * Math.max(1, position)))
            else if (draw < 0.5) deleteAt(list, position + Math.floor(next() * 50))
            else if (draw < 0.7) list.push(`new${counter.n++}`)
            else {
              const [moved] = deleteAt(list, Math.floor(next() * list.length))
              counter.moved.add(moved!)
              list.unshift(moved!)
            }
          }
        }
      })
      for (const id of r.existedAll) expect(r.landed.has(id), `seed ${seed}: ${id}`).toBe(true)
    }
  })

  it("when every landed row is gone, the pass starts over from the start rather than guess", () => {
    const recent = new RecentIds(10, ["a", "b"])
    expect(joinPage(["x", "y"], recent, 40)._tag).toBe("Lost")
    expect(joinPage(["x", "y"], recent, 0)).toEqual({ _tag: "Joined", at: -1, shifted: true })
    expect(joinPage(["b", "c"], recent, 40)).toEqual({ _tag: "Joined", at: 0, shifted: false })
    expect(joinPage(["z", "b", "c"], recent, 40)).toEqual({ _tag: "Joined", at: 1, shifted: true })
  })

  it("steps back a page, then two, four ... never before the start", () => {
    expect([0, 1, 2, 3].map((a) => stepBack(1000, 100, a))).toEqual([900, 800, 600, 200])
    expect(stepBack(50, 100, 0)).toBe(0)
  })

  it("keeps only the most recent ids", () => {
    const recent = new RecentIds(3, ["a", "b"])
    recent.add(["c", "d", "b"])
    expect(recent.last(10)).toEqual(["b", "c", "d"])
    expect(recent.has("a")).toBe(false)
  })
})

import { describe, expect, it } from "@effect/vitest"
import type { Answer } from "../../../src/sync/paging/answer.js"
import { Walk } from "../../../src/sync/paging/Continuation.js"
import { atOffset, type Place } from "../../../src/sync/paging/place.js"
import { RecentIds } from "../../../src/sync/paging/RecentIds.js"

/** A tiny seeded generator (mulberry32): the same churn for the same seed. */
const random = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

interface Service {
  /** Share of rows left out of every page after paging (the same rows every time). */
  readonly withhold?: number
  /** `offset` ignored: every page asked by position is the first. */
  readonly ignoreOffset?: boolean
}

/**
 * A pass over a list that changes between pages, with the pager's own rules (Walk): ask where it says, join, ask
 * again where it says, switch to cursors when the service ignores `offset`. The service pages by position, leaves
 * `withhold` of the rows out after paging (pageInfo as paged), and issues offset cursors (a row's 1-based position,
 * as graphql-ruby's). Returns the ids landed, the visible ids that existed for the whole pass, pages and re-asks.
 */
const pass = (options: {
  readonly size: number
  readonly first: number
  readonly seed: number
  readonly service?: Service
  readonly churn?: (list: Array<string>, position: number, next: () => number, counter: { n: number; moved: Set<string> }) => void
}) => {
  const next = random(options.seed)
  const counter = { n: options.size, moved: new Set<string>() }
  const hidden = (id: string) => {
    let h = 0
    for (const c of id) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0
    return random(h ^ options.seed)() < (options.service?.withhold ?? 0)
  }
  const list = Array.from({ length: options.size }, (_, i) => `r${i}`)
  const existedAll = new Set(list.filter((id) => !hidden(id)))
  const settle = () => {
    const alive = new Set(list)
    for (const id of existedAll) if (!alive.has(id) || counter.moved.has(id)) existedAll.delete(id)
  }
  const churn = (position: number) => {
    options.churn?.(list, position, next, counter)
    settle()
  }
  const serve = (place: Place, first: number): Answer => {
    const start = place._tag === "Offset" ? (options.service?.ignoreOffset ? 0 : place.offset) : place.after === null ? 0 : Number(place.after)
    const paged = list.slice(start, start + first).map((id, k) => ({ id, cursor: String(start + k + 1) }))
    const shown = paged.filter((row) => !hidden(row.id))
    return {
      place,
      first,
      ids: shown.map((row) => row.id),
      cursors: shown.map((row) => row.cursor),
      hasNextPage: start + paged.length < list.length,
      endCursor: paged.length > 0 ? paged[paged.length - 1]!.cursor : null
    }
  }
  const landed = new Set<string>()
  const walk = new Walk(new RecentIds(500), 0)
  // the page the Pager fetches ahead (Walk.nextIfFull, asked with each page's first ask) against where the walk asks
  const ahead = { made: 0, used: 0, wrongAfterFull: 0 }
  let predicted: Place | undefined
  let asks = 0
  let pages = 0
  let unchecked = 0
  for (; pages < 20_000; pages++) {
    churn(walk.position)
    let place = walk.place(options.first)
    if (predicted !== undefined) {
      if (JSON.stringify(predicted) === JSON.stringify(place)) ahead.used++
      predicted = undefined
    }
    for (let attempt = 0; ; attempt++) {
      if (attempt > 40) throw new Error(`no join after 40 asks at ${JSON.stringify(place)}`)
      const after = attempt === 0 ? walk.nextIfFull(place, options.first) : undefined
      if (after !== undefined) ahead.made++
      const answer = serve(place, options.first)
      const verdict = walk.judge(answer)
      if (verdict._tag === "Joined") {
        for (const id of answer.ids.slice(verdict.newFrom)) landed.add(id)
        if (!verdict.checked) unchecked++
        walk.landed(answer)
        if (!answer.hasNextPage) return { landed, existedAll, asks, pages: pages + 1, unchecked, paging: walk.pagingBy, ahead }
        // a full page that joined at its first ask: the walk must ask next exactly where the page ahead was fetched
        if (after !== undefined && answer.ids.length === options.first && JSON.stringify(walk.place(options.first)) !== JSON.stringify(after)) ahead.wrongAfterFull++
        predicted = after
        break
      }
      asks++
      if (verdict._tag === "CannotPage") throw new Error(verdict.detail)
      if (verdict._tag === "IgnoresOffset") {
        walk.useCursors()
        place = walk.place(options.first)
      } else {
        place = verdict.place
        churn(walk.position)
      }
    }
    if (walk.barrenPages > 50) throw new Error(`barren at ${walk.position}`)
  }
  throw new Error("the pass never ended")
}

const deleteAt = (list: Array<string>, i: number) => list.splice(Math.max(0, Math.min(list.length - 1, i)), 1)

const deletionsBehind = (list: Array<string>, position: number, next: () => number) => {
  for (let k = 0; k < 3; k++) deleteAt(list, Math.floor(next() * Math.max(1, position)))
}

const anywhere = (list: Array<string>, position: number, next: () => number, counter: { n: number; moved: Set<string> }) => {
  const n = Math.floor(next() * 6)
  for (let k = 0; k < n; k++) {
    const draw = next()
    if (draw < 0.3) deleteAt(list, Math.floor(next() * Math.max(1, position)))
    else if (draw < 0.5) deleteAt(list, position + Math.floor(next() * 50))
    else if (draw < 0.7) list.push(`new${counter.n++}`)
    else {
      // a row that moves (an edit in newest-first order) is the next pass's: its updatedAt is newer than this pass's mark
      const [moved] = deleteAt(list, Math.floor(next() * list.length))
      counter.moved.add(moved!)
      list.unshift(moved!)
    }
  }
}

const expectEveryRowLanded = (r: { landed: Set<string>; existedAll: Set<string> }, where: string) => {
  const missing = [...r.existedAll].filter((id) => !r.landed.has(id))
  expect(missing, where).toEqual([])
}

describe("paging by position with a join", () => {
  it("an unchanging list is read once, each page joining on the last row of the one before", () => {
    const r = pass({ size: 1000, first: 100, seed: 1 })
    expect(r.landed.size).toBe(1000)
    expect(r.asks).toBe(0)
    // 0, 99, 198, ... 990: the eleventh page reaches the end (hasNextPage false)
    expect(r.pages).toBe(11)
    // each page but the last was fetched ahead, where the walk then asked it
    expect(r.ahead).toEqual({ made: 11, used: 10, wrongAfterFull: 0 })
  })

  it("deletions behind the pass (the offset-cursor skip) lose no row that existed throughout", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = pass({ size: 2000, first: 100, seed, churn: deletionsBehind })
      expectEveryRowLanded(r, `seed ${seed}`)
      expect(r.asks).toBeGreaterThan(0)
    }
  })

  it("deletions and creates anywhere, and rows moving to the top (an edit in newest-first order), lose no unchanged row", () => {
    for (let seed = 1; seed <= 20; seed++) expectEveryRowLanded(pass({ size: 1500, first: 40, seed, churn: anywhere }), `seed ${seed}`)
  })
})

describe("pages shorter than first: the service leaves rows out after paging", () => {
  it("a page shorter than first is not the end: every row the service returns lands, on an unchanging list", () => {
    for (const withhold of [0.1, 0.3, 0.5]) {
      for (let seed = 1; seed <= 10; seed++) {
        const r = pass({ size: 2000, first: 100, seed, service: { withhold } })
        expectEveryRowLanded(r, `withhold ${withhold}, seed ${seed}`)
        expect(r.existedAll.size, "some rows were withheld").toBeLessThan(2000)
        // offsets advance by the positions paged: about 2000 / 99 pages, a few asked again where the last rows were left out
        expect(r.pages).toBeLessThanOrEqual(Math.ceil(2000 / 70) + 1)
      }
    }
  })

  it("under deletions behind and churn anywhere, as well as rows left out, no row that existed throughout is lost", () => {
    for (let seed = 1; seed <= 20; seed++) {
      expectEveryRowLanded(pass({ size: 2000, first: 100, seed, service: { withhold: 0.25 }, churn: deletionsBehind }), `behind, seed ${seed}`)
      expectEveryRowLanded(pass({ size: 1500, first: 40, seed, service: { withhold: 0.2 }, churn: anywhere }), `anywhere, seed ${seed}`)
    }
  })

  it("pages with no row at all (every row paged left out) go on to the end instead of ending the pass", () => {
    const r = pass({ size: 3000, first: 10, seed: 3, service: { withhold: 0.9 } })
    expectEveryRowLanded(r, "withhold 0.9")
    expect(r.unchecked).toBeGreaterThan(0)
  })

  it("small pages (first 2) still advance and land every row", () => {
    expectEveryRowLanded(pass({ size: 300, first: 2, seed: 5, service: { withhold: 0.3 } }), "first 2")
  })
})

describe("the page fetched ahead (Walk.nextIfFull)", () => {
  it("is where the walk asks next whenever the page before came back full and joined at its first ask: under deletions, churn and rows left out", () => {
    for (let seed = 1; seed <= 20; seed++) {
      for (const r of [pass({ size: 2000, first: 100, seed, churn: deletionsBehind }), pass({ size: 1500, first: 40, seed, churn: anywhere })]) {
        expect(r.ahead.wrongAfterFull, `seed ${seed}`).toBe(0)
        expect(r.ahead.used, `seed ${seed}`).toBeGreaterThan(0)
      }
      // pages with rows left out are rarely full: what is fetched ahead after them is mostly dropped
      for (const r of [
        pass({ size: 2000, first: 100, seed, service: { withhold: 0.25 }, churn: deletionsBehind }),
        pass({ size: 1500, first: 40, seed, service: { withhold: 0.2 }, churn: anywhere })
      ]) expect(r.ahead.wrongAfterFull, `seed ${seed}`).toBe(0)
    }
  })

  it("is not guessed when pages are asked after cursors", () => {
    const r = pass({ size: 1000, first: 100, seed: 2, service: { ignoreOffset: true } })
    expect(r.paging).toBe("after")
    // three pages by offset (the second, 99 on, is not yet far enough to tell; the third is), none after the switch
    expect(r.ahead).toEqual({ made: 3, used: 2, wrongAfterFull: 0 })
    const walk = new Walk(new RecentIds(10), 0, "after")
    expect(walk.nextIfFull(walk.place(10), 10)).toBeUndefined()
  })
})

describe("a service that ignores offset", () => {
  it("is detected (a page further on holds the start's rows) and paged after its cursors instead, every row landed", () => {
    const r = pass({ size: 1000, first: 100, seed: 2, service: { ignoreOffset: true } })
    expect(r.paging).toBe("after")
    expect(r.landed.size).toBe(1000)
  })

  it("paged after its offset cursors, deletions behind and rows left out lose no row", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const r = pass({ size: 1500, first: 50, seed, service: { ignoreOffset: true, withhold: 0.2 }, churn: deletionsBehind })
      expect(r.paging).toBe("after")
      expectEveryRowLanded(r, `seed ${seed}`)
    }
  })
})

describe("Walk", () => {
  const answer = (place: Place, first: number, ids: ReadonlyArray<string>, hasNextPage = true): Answer => ({ place, first, ids, hasNextPage })

  it("joins on any landed row of the page, and asks from where the last landed row can be when the rows after it were left out", () => {
    const walk = new Walk(new RecentIds(100), 0)
    expect(walk.place(40)).toEqual(atOffset(0))
    // positions 0-39 paged, 25 rows returned: the last one is at position 24 at least
    const rows = Array.from({ length: 25 }, (_, i) => `r${i}`)
    const first = answer(atOffset(0), 40, rows)
    expect(walk.judge(first)).toEqual({ _tag: "Joined", newFrom: 0, shifted: false, checked: true })
    walk.landed(first)
    expect(walk.position).toBe(40)
    // the next page starts 4 positions back (rows were left out): it holds no landed row, so asked again from 24
    const next = walk.place(40)
    expect(next).toEqual(atOffset(36))
    expect(walk.judge(answer(next, 40, ["x", "y"]))).toMatchObject({ _tag: "AskAgain", place: atOffset(24) })
    // there it joins on r24: not moved, the rows after it are new
    expect(walk.judge(answer(atOffset(24), 40, ["r24", "x", "y"]))).toEqual({ _tag: "Joined", newFrom: 1, shifted: false, checked: true })
    // a page that does not join where the last landed row must be (its lowest place is in the page): moved
    expect(walk.judge(answer(atOffset(24), 40, ["x", "y"]))).toMatchObject({ _tag: "AskAgain", place: atOffset(0) })
  })

  it("a page that does not join where the last landed row must be: the list moved, asked a page further back, then two", () => {
    const walk = new Walk(new RecentIds(10, ["a", "b"]), 40)
    const place = walk.place(10)
    expect(place).toEqual(atOffset(39))
    const lost = walk.judge(answer(place, 10, ["x", "y"]))
    expect(lost).toMatchObject({ _tag: "AskAgain", place: atOffset(29) })
    expect(walk.judge(answer(atOffset(29), 10, ["w"]))).toMatchObject({ _tag: "AskAgain", place: atOffset(19) })
    expect(walk.judge(answer(atOffset(19), 10, ["z", "b", "c"]))).toEqual({ _tag: "Joined", newFrom: 2, shifted: true, checked: true })
  })

  it("when every landed row is gone, the pass starts over from the start rather than guess", () => {
    const walk = new Walk(new RecentIds(10, ["a", "b"]), 40)
    walk.place(10)
    expect(walk.judge(answer(atOffset(0), 10, ["x", "y"]))).toEqual({ _tag: "Joined", newFrom: 0, shifted: true, checked: true })
  })

  it("keeps only the most recent ids", () => {
    const recent = new RecentIds(3, ["a", "b"])
    recent.add(["c", "d", "b"])
    expect(recent.last(10)).toEqual(["b", "c", "d"])
    expect(recent.has("a")).toBe(false)
  })

  it("keeps the most recent ids in order as they wrap around its capacity many times", () => {
    const recent = new RecentIds(5)
    const ids = Array.from({ length: 23 }, (_, i) => `id${i + 1}`)
    for (let i = 0; i < ids.length; i += 4) recent.add([...ids.slice(i, i + 4), "id1"].filter((id) => id !== "id1" || i === 0))
    expect(recent.size).toBe(5)
    expect(recent.last(5)).toEqual(["id19", "id20", "id21", "id22", "id23"])
    expect(recent.last(2)).toEqual(["id22", "id23"])
    expect(recent.last(50)).toEqual(["id19", "id20", "id21", "id22", "id23"])
    expect(recent.has("id18")).toBe(false)
    expect(recent.has("id19")).toBe(true)
    recent.add(["id23", "id24"])
    expect(recent.last(5)).toEqual(["id20", "id21", "id22", "id23", "id24"])
  })
})

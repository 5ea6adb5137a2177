import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { newestFirst, updatedSince } from "../../../src/sync/pass/Incremental.js"
import type { Page } from "../../../src/sync/model.js"
import type { PassToMake } from "../../../src/sync/pass/PassPlan.js"
import { advance, batchHighWater, type BatchStep, type PassRules, passRules, type PassState, passStarts } from "../../../src/sync/pass/PassState.js"

const minute = 60_000
const t0 = Date.parse("2026-11-23T12:00:00Z")
const iso = (minutes: number) => new Date(t0 + minutes * minute).toISOString()
const updatedAt = (node: { readonly id: string } & Record<string, unknown>) => node.updatedAt as string

/** A page of `n` rows (ids `<name>-1..n`) updated at the given minutes after t0 (newest first or not: as given). */
const page = (
  name: string,
  minutes: ReadonlyArray<number>,
  options: Partial<Pick<Page, "mayHaveMore" | "shifted" | "checked" | "newFrom" | "position" | "partition">> = {}
): Page => {
  const nodes = minutes.map((m, i) => {
    const node = { id: `${name}-${i + 1}`, updatedAt: iso(m) }
    return { node, raw: node }
  })
  return {
    partition: options.partition ?? 0,
    offset: 0,
    first: minutes.length,
    nodes,
    newFrom: options.newFrom ?? 0,
    position: options.position ?? minutes.length,
    fetchedAtMs: 0,
    mayHaveMore: options.mayHaveMore ?? true,
    body: undefined,
    shifted: options.shifted ?? false,
    checked: options.checked ?? true,
    costPoints: 1,
    overheadPoints: 0
  }
}

const since = new Date(t0 + 10 * minute)
const full: PassToMake = { _tag: "Full", reason: "due" }
const incremental: PassToMake = {
  _tag: "Incremental",
  pass: Option.getOrThrow(newestFirst({}).plan(since)),
  since
}
const ascending: PassToMake = {
  _tag: "Incremental",
  pass: Option.getOrThrow(updatedSince((after) => ({ after })).plan(since)),
  since
}
const fullRules = passRules(full, updatedAt)
const newestFirstRules = passRules(incremental, updatedAt)
const ascendingRules = passRules(ascending, updatedAt)

/** What a step says, in the terms the cases compare. */
const seen = (step: BatchStep) => ({
  landed: step.landing.map((p) => p.nodes[0]?.node.id.split("-")[0] ?? "empty"),
  finishes: step.finishes,
  reachedEnd: step.reachedEnd,
  ends: step.ends,
  shifted: step.state.shifted,
  highWaterMark: step.progress.highWaterMark,
  passNewest: step.state.passNewest === undefined ? undefined : new Date(step.state.passNewest).toISOString(),
  changed: step.changed
})

type Case = readonly [name: string, state: PassState, batch: ReadonlyArray<Page>, rules: PassRules, expected: Partial<ReturnType<typeof seen>>]

const fresh = passStarts(false)
const earlier: PassState = { passNewest: t0 + 50 * minute, shifted: false }

describe("advance", () => {
  const cases: ReadonlyArray<Case> = [
    // a full pass
    [
      "full: a batch inside the list lands whole and moves the mark to its newest",
      fresh,
      [page("a", [5, 7]), page("b", [3])],
      fullRules,
      { landed: ["a", "b"], finishes: false, reachedEnd: false, ends: undefined, highWaterMark: iso(7), passNewest: iso(7), changed: [] }
    ],
    [
      "full: the mark is the batch's newest even when an earlier batch had newer rows",
      earlier,
      [page("a", [5, 7])],
      fullRules,
      { highWaterMark: iso(7), passNewest: iso(50) }
    ],
    [
      "full: the page that ends the list ends the pass, with its sweep",
      fresh,
      [page("a", [1]), page("b", [2], { mayHaveMore: false })],
      fullRules,
      { landed: ["a", "b"], finishes: true, reachedEnd: true, ends: "with-sweep", highWaterMark: iso(2) }
    ],
    [
      "full: rows older than any mark do not end a full pass",
      fresh,
      [page("a", [-100, -200])],
      fullRules,
      { finishes: false, ends: undefined, changed: [] }
    ],
    [
      "full: the rows read again to join a page count neither in the mark nor as changed",
      fresh,
      [page("a", [90, 5, 6], { newFrom: 1 })],
      fullRules,
      { highWaterMark: iso(6), passNewest: iso(6) }
    ],
    // an incremental pass
    [
      "incremental: a batch of changed rows moves the pass's newest, the mark with it",
      earlier,
      [page("a", [40, 30]), page("b", [20, 15])],
      newestFirstRules,
      { landed: ["a", "b"], finishes: false, ends: undefined, highWaterMark: iso(50), passNewest: iso(50), changed: ["a-1", "a-2", "b-1", "b-2"] }
    ],
    [
      "incremental: the first page older than `since` in the middle of a batch ends the pass; the pages after it do not land",
      fresh,
      [page("a", [30, 12]), page("b", [9, 8]), page("c", [7, 6])],
      newestFirstRules,
      { landed: ["a", "b"], finishes: true, reachedEnd: false, ends: "with-batch", highWaterMark: iso(30) }
    ],
    [
      "incremental: only the rows updated since `since` are changed (the ending page holds older ones)",
      fresh,
      [page("a", [11, 10, 9])],
      ascendingRules,
      { changed: ["a-1", "a-2"], finishes: false }
    ],
    [
      "incremental: the rows read again to join are not changed",
      fresh,
      [page("a", [30, 20], { newFrom: 1 })],
      newestFirstRules,
      { changed: ["a-2"], highWaterMark: iso(20) }
    ],
    [
      "incremental: the end of the list ends the pass in the batch (no sweep)",
      fresh,
      [page("a", [30], { mayHaveMore: false })],
      ascendingRules,
      { finishes: true, reachedEnd: true, ends: "with-batch", highWaterMark: iso(30) }
    ],
    [
      "incremental ascending: old rows do not end the pass, only the end of the list does",
      fresh,
      [page("a", [1, 2]), page("b", [3])],
      ascendingRules,
      { landed: ["a", "b"], finishes: false, changed: [] }
    ],
    // shifted and unchecked pages
    [
      "a page that did not join where it would have marks the pass shifted",
      fresh,
      [page("a", [1]), page("b", [2], { shifted: true })],
      fullRules,
      { shifted: true }
    ],
    [
      "a page that could not be checked marks the pass shifted",
      fresh,
      [page("a", [1], { checked: false })],
      fullRules,
      { shifted: true }
    ],
    ["a pass once shifted stays so", { passNewest: undefined, shifted: true }, [page("a", [1])], fullRules, { shifted: true }],
    [
      "a shifted page after the one that ends the pass does not land and does not count",
      fresh,
      [page("a", [30]), page("b", [1]), page("c", [2], { shifted: true })],
      newestFirstRules,
      { landed: ["a", "b"], shifted: false, finishes: true }
    ],
    // empty pages
    [
      "an empty page lands (its position moves) and says nothing about the mark",
      earlier,
      [page("a", [])],
      fullRules,
      { landed: ["empty"], finishes: false, highWaterMark: null, passNewest: iso(50) }
    ],
    [
      "an empty page does not end a newest-first pass",
      fresh,
      [page("a", []), page("b", [30])],
      newestFirstRules,
      { finishes: false, landed: ["empty", "b"], highWaterMark: iso(30) }
    ],
    [
      "an empty last page of the list ends the pass",
      fresh,
      [page("a", [3]), page("b", [], { mayHaveMore: false })],
      fullRules,
      { landed: ["a", "empty"], finishes: true, reachedEnd: true, ends: "with-sweep", highWaterMark: iso(3) }
    ],
    // a stream without updatedAt
    [
      "without updatedAt a full pass hands no mark",
      fresh,
      [page("a", [5]), page("b", [6], { mayHaveMore: false })],
      { ...fullRules, updatedAt: undefined },
      { highWaterMark: null, passNewest: undefined, finishes: true, ends: "with-sweep", changed: [] }
    ],
    [
      "without updatedAt an incremental pass finds every new row changed",
      fresh,
      [page("a", [-100, -200], { newFrom: 1 })],
      { ...ascendingRules, updatedAt: undefined },
      { highWaterMark: null, changed: ["a-2"], finishes: false }
    ]
  ]
  for (const [name, state, batch, rules, expected] of cases) {
    it(name, () => expect(seen(advance(state, batch, rules))).toMatchObject(expected))
  }

  it("the checkpoint moves to the last landed page: its partition, position and last 20 ids", () => {
    const last = page("b", Array.from({ length: 25 }, (_, i) => i), { partition: 2, position: 75 })
    const { progress } = advance(fresh, [page("a", [1], { partition: 1, position: 9 }), last], fullRules)
    expect(progress).toMatchObject({ kind: "full", partition: 2, position: 75, shifted: false })
    expect(progress.anchors).toEqual(last.nodes.slice(5).map((n) => n.node.id))
  })

  it("folded over the batches of a pass, the pass's newest and shifted carry from batch to batch", () => {
    const batches = [[page("a", [30, 20])], [page("b", [25], { shifted: true })], [page("c", [40, 12])], [page("d", [8, 5])]]
    const steps: Array<BatchStep> = []
    batches.reduce((state, batch) => {
      const step = advance(state, batch, newestFirstRules)
      steps.push(step)
      return step.state
    }, fresh)
    expect(steps.map(seen).map((s) => [s.highWaterMark, s.shifted, s.finishes])).toEqual([
      [iso(30), false, false],
      [iso(30), true, false],
      [iso(40), true, false],
      [iso(40), true, true]
    ])
  })
})

describe("batchHighWater", () => {
  it("a full pass hands each batch's newest updatedAt; an incremental pass the newest of the whole pass", () => {
    expect(batchHighWater("full", 5, 9)).toBe(5)
    expect(batchHighWater("incremental", 5, 9)).toBe(9)
    expect(batchHighWater("full", undefined, 9)).toBeUndefined()
  })
})

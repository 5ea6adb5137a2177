import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { settleById } from "../../../src/sync/pass/Confirmations.js"
import {
  type Answer,
  type AnswerVerdict,
  byIdVerdict,
  byValueVerdict,
  type Candidate,
  candidateStep,
  type CandidateStep,
  type ListingFacts,
  listingNeeded,
  listingVerdict,
  type ListingVerdict,
  type PassFacts,
  type Proof,
  undecidedNote
} from "../../../src/sync/pass/SweepPlan.js"

const candidates = (...ids: ReadonlyArray<string>): ReadonlyArray<Candidate> => ids.map((id) => ({ id, near: `t-${id}` }))

describe("listingNeeded", () => {
  const cases: ReadonlyArray<readonly [string, PassFacts, boolean]> = [
    ["a complete pass (count = seen, no shift): no listing", { shifted: false, total: 500, seen: 500 }, false],
    ["a list that shifted under the pass: listed (rows landed then deleted under it become candidates)", { shifted: true, total: 500, seen: 500 }, true],
    ["short pages from withheld nodes (count above seen): listed", { shifted: false, total: 500, seen: 400 }, true],
    ["rows deleted since the pass saw them (count below seen): listed", { shifted: false, total: 495, seen: 500 }, true]
  ]
  for (const [name, facts, expected] of cases) it(name, () => expect(listingNeeded(facts)).toBe(expected))
})

describe("listingVerdict", () => {
  const cases: ReadonlyArray<readonly [string, ListingFacts, Partial<ListingVerdict>]> = [
    ["a complete listing of every row counted: decisive", { uncheckedPages: 0, total: 995, positions: 995, listed: 995 }, { decisive: true, withheld: 0 }],
    [
      "a page it could not check (a block of withheld rows, churn at the wrong moment): not decisive",
      { uncheckedPages: 1, total: 1000, positions: 1000, listed: 870 },
      { decisive: false, why: "1 page(s) of the listing could not be checked against the page before (too few rows around them)", withheld: 130 }
    ],
    [
      "a count above the positions paged (the list said it ends early: the 1,170 case): not decisive",
      { uncheckedPages: 0, total: 2370, positions: 1200, listed: 1200 },
      { decisive: false, why: "the service said the list ends after 1200 positions but counts 2370 rows", withheld: 1170 }
    ],
    [
      "complete, short pages from withheld nodes: not decisive (an unlisted row may be withheld)",
      { uncheckedPages: 0, total: 1000, positions: 1000, listed: 800 },
      { decisive: false, why: "the service counts 200 row(s) it did not list (it withholds them from this app)", withheld: 200 }
    ]
  ]
  for (const [name, facts, expected] of cases) it(name, () => expect(listingVerdict(facts)).toMatchObject(expected))
})

describe("candidateStep", () => {
  const decisive = listingVerdict({ uncheckedPages: 0, total: 10, positions: 10, listed: 10 })
  const shortOfCount = listingVerdict({ uncheckedPages: 0, total: 2370, positions: 1200, listed: 1200 })
  const unchecked = listingVerdict({ uncheckedPages: 2, total: 10, positions: 10, listed: 10 })
  const shown = (step: CandidateStep) =>
    step._tag === "ListFirst" ? "list first" : { mark: step.mark, byId: step.byId, byValue: Object.fromEntries(step.byValue), keep: step.keep }
  const cases: ReadonlyArray<readonly [string, Proof, ReadonlyArray<Candidate>, ListingVerdict | undefined, ReturnType<typeof shown>]> = [
    ["by id: every candidate asked for by id, listing or not", "ById", candidates("a", "b"), undefined, { mark: [], byId: ["a", "b"], byValue: {}, keep: [] }],
    ["by id, even beside a listing that proves nothing", "ById", candidates("a"), unchecked, { mark: [], byId: ["a"], byValue: {}, keep: [] }],
    ["no id filter, no listing yet: list first", "Near", candidates("a"), undefined, "list first"],
    ["a decisive listing marks the candidates it did not list", "Near", candidates("a", "b"), decisive, { mark: ["a", "b"], byId: [], byValue: {}, keep: [] }],
    [
      "a listing short of the count never marks (the rule that marked 1,170 live rows): narrow listings instead",
      "Near",
      [{ id: "a", near: "2026-01-01T00:00:00Z" }, { id: "b", near: "2026-01-01T00:00:00Z" }, { id: "c", near: "2026-01-02T00:00:00Z" }],
      shortOfCount,
      { mark: [], byId: [], byValue: { "2026-01-01T00:00:00Z": ["a", "b"], "2026-01-02T00:00:00Z": ["c"] }, keep: [] }
    ],
    ["a candidate without a stored value is kept", "Near", [{ id: "a", near: null }], unchecked, { mark: [], byId: [], byValue: {}, keep: [{ id: "a", reason: "noValue" }] }],
    [
      "listing only, the listing short of the count: kept, none marked",
      "ListingOnly",
      candidates("a", "b"),
      shortOfCount,
      { mark: [], byId: [], byValue: {}, keep: [{ id: "a", reason: "listingNotDecisive" }, { id: "b", reason: "listingNotDecisive" }] }
    ],
    ["listing only, decisive: marked", "ListingOnly", candidates("a"), decisive, { mark: ["a"], byId: [], byValue: {}, keep: [] }]
  ]
  for (const [name, proof, cs, listing, expected] of cases) it(name, () => expect(shown(candidateStep(proof, cs, listing))).toEqual(expected))
})

describe("byIdVerdict", () => {
  const cases: ReadonlyArray<readonly [string, Answer, AnswerVerdict]> = [
    ["every candidate found alive by id", { asked: ["a", "b"], returned: ["b", "a"], counted: undefined }, { _tag: "Decided", alive: ["a", "b"], gone: [], keep: [] }],
    ["some not returned: counted first", { asked: ["a", "b", "c"], returned: ["b"], counted: undefined }, { _tag: "Count", alive: ["b"], ids: ["a", "c"] }],
    ["not returned, not counted: gone", { asked: ["a", "c"], returned: [], counted: 0 }, { _tag: "Decided", alive: [], gone: ["a", "c"], keep: [] }],
    [
      "counted but not returned (withheld, a record newly withheld): kept",
      { asked: ["a", "c"], returned: [], counted: 2 },
      { _tag: "Decided", alive: [], gone: [], keep: [{ id: "a", reason: "withheld" }, { id: "c", reason: "withheld" }] }
    ],
    ["some counted: each half on its own", { asked: ["a", "b", "c"], returned: [], counted: 1 }, { _tag: "Split", alive: [], halves: [["a", "b"], ["c"]] }],
    ["one counted of one: withheld", { asked: ["c"], returned: [], counted: 1 }, { _tag: "Decided", alive: [], gone: [], keep: [{ id: "c", reason: "withheld" }] }],
    ["a count of the returned ones too: only the rest is withheld", { asked: ["a", "b"], returned: ["a"], counted: 1 }, { _tag: "Decided", alive: ["a"], gone: ["b"], keep: [] }]
  ]
  for (const [name, answer, expected] of cases) it(name, () => expect(byIdVerdict(answer)).toEqual(expected))
})

describe("byValueVerdict", () => {
  const cases: ReadonlyArray<readonly [string, Answer, AnswerVerdict]> = [
    ["the candidate returned under its creation time: alive", { asked: ["a"], returned: ["x", "a"], counted: undefined }, { _tag: "Decided", alive: ["a"], gone: [], keep: [] }],
    ["not returned: counted first", { asked: ["a"], returned: ["x"], counted: undefined }, { _tag: "Count", alive: [], ids: ["a"] }],
    ["not returned, the count no more than returned: gone", { asked: ["a", "b"], returned: ["x"], counted: 1 }, { _tag: "Decided", alive: [], gone: ["a", "b"], keep: [] }],
    [
      "not returned, the service counts a row it did not return under the value (withheld, maybe this one): kept",
      { asked: ["a"], returned: ["x"], counted: 2 },
      { _tag: "Decided", alive: [], gone: [], keep: [{ id: "a", reason: "sharesWithWithheld" }] }
    ]
  ]
  for (const [name, answer, expected] of cases) it(name, () => expect(byValueVerdict(answer)).toEqual(expected))
})

describe("undecidedNote", () => {
  it("withheld rows are not undecided", () => expect(undecidedNote([{ id: "a", reason: "withheld" }], undefined, undefined)).toBeNull())
  it("names each reason and how many", () =>
    expect(
      undecidedNote(
        [
          { id: "a", reason: "sharesWithWithheld" },
          { id: "b", reason: "sharesWithWithheld" },
          { id: "c", reason: "listingNotDecisive" }
        ],
        "1 page(s) of the listing could not be checked",
        "created_at"
      )
    ).toBe("not proven gone, kept live: 2 row(s): withheld from this app or gone (the service counts a record it does not return with the same created_at); 1 row(s): the listing proves nothing: 1 page(s) of the listing could not be checked"))
})

describe("settleById (the counts and splits a verdict asks for, against a service that withholds some ids)", () => {
  const service = (withheld: ReadonlyArray<string>, alive: ReadonlyArray<string>) => {
    const asked: Array<ReadonlyArray<string>> = []
    const count = (ids: ReadonlyArray<string>) =>
      Effect.sync(() => {
        asked.push(ids)
        return ids.filter((id) => withheld.includes(id) || alive.includes(id)).length
      })
    return { asked, count }
  }
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string>, { gone: ReadonlyArray<string>; withheld: ReadonlyArray<string>; counts: number }]> = [
    ["all returned: no count", ["a", "b"], [], ["a", "b"], { gone: [], withheld: [], counts: 0 }],
    ["none withheld: one count proves the rest gone", ["a", "b", "c", "d"], [], ["a"], { gone: ["b", "c", "d"], withheld: [], counts: 1 }],
    ["all withheld: one count keeps them", ["a", "b", "c"], ["a", "b", "c"], [], { gone: [], withheld: ["a", "b", "c"], counts: 1 }],
    ["one withheld among four gone: halves down to it", ["a", "b", "c", "d", "e"], ["c"], [], { gone: ["a", "b", "d", "e"], withheld: ["c"], counts: 5 }]
  ]
  for (const [name, asked, withheld, returned, expected] of cases) {
    it(name, () => {
      const s = service(withheld, returned)
      const settled = Effect.runSync(settleById(asked, returned, s.count))
      expect({ gone: [...settled.gone].sort(), withheld: settled.keep.map((k) => k.id).sort(), counts: s.asked.length }).toEqual(expected)
      expect([...settled.alive].sort()).toEqual([...returned].sort())
    })
  }
})

import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import { fullPassesOnly, newestFirst, updatedSince } from "../../../src/sync/pass/Incremental.js"
import type { Checkpoint } from "../../../src/sync/model.js"
import { decidePass, type PassInput } from "../../../src/sync/pass/PassPlan.js"

const hour = 3_600_000
const now = Date.parse("2026-11-23T12:00:00Z")
const at = (msAgo: number) => new Date(now - msAgo)
const checkpoint = (c: Partial<Checkpoint>): Option.Option<Checkpoint> =>
  Option.some({
    passKind: null,
    partition: 0,
    position: 0,
    anchors: [],
    shifted: false,
    tracksSeen: false,
    passStartedAt: null,
    highWaterMark: at(2 * hour),
    lastFullPassAt: at(3 * hour),
    fullPassRequestedAt: null,
    lastIncrementalPassAt: at(hour / 2),
    ...c
  })

const base: PassInput = {
  mode: "sync",
  incremental: newestFirst({ sort: [{ key: "UPDATED_AT", direction: "DESCENDING" }] }),
  checkpoint: checkpoint({}),
  nowMs: now,
  fullPassEvery: Duration.days(1),
  overlap: Duration.minutes(5)
}

describe("decidePass", () => {
  const cases: ReadonlyArray<readonly [string, Partial<PassInput>, string]> = [
    ["backfill is always a full pass", { mode: "backfill" }, "Full:backfill"],
    ["no checkpoint: the first pass is full", { checkpoint: Option.none() }, "Full:first"],
    ["a full pass never finished: full", { checkpoint: checkpoint({ lastFullPassAt: null }) }, "Full:first"],
    ["a full pass in progress resumes", { checkpoint: checkpoint({ passKind: "full" }) }, "Full:resume"],
    ["the cadence is due: full", { fullPassEvery: Duration.hours(3) }, "Full:due"],
    ["the cadence is not due: incremental", { fullPassEvery: Duration.hours(4) }, "Incremental"],
    ["an incremental pass in progress starts over as incremental", { checkpoint: checkpoint({ passKind: "incremental" }) }, "Incremental"],
    ["no incremental access, not due: the stream is up to date", { incremental: fullPassesOnly }, "UpToDate"],
    ["no incremental access, due: full", { incremental: fullPassesOnly, fullPassEvery: Duration.hours(1) }, "Full:due"],
    ["a change event asked for a full pass after the last one: full", { checkpoint: checkpoint({ fullPassRequestedAt: at(hour) }) }, "Full:requested"],
    ["...also without incremental access", { incremental: fullPassesOnly, checkpoint: checkpoint({ fullPassRequestedAt: at(hour) }) }, "Full:requested"],
    ["a request the last full pass answered: incremental", { checkpoint: checkpoint({ fullPassRequestedAt: at(4 * hour) }) }, "Incremental"],
    ["events flow and the last incremental pass is recent: up to date", { incrementalEveryWithEvents: Duration.hours(1) }, "UpToDate"],
    ["events flow, the last incremental pass is older than the cadence: incremental", { incrementalEveryWithEvents: Duration.minutes(20) }, "Incremental"],
    ["events flow, but the full pass is due: full", { incrementalEveryWithEvents: Duration.hours(1), fullPassEvery: Duration.hours(3) }, "Full:due"],
    ["events flow, no incremental pass yet: incremental", { incrementalEveryWithEvents: Duration.hours(1), checkpoint: checkpoint({ lastIncrementalPassAt: null }) }, "Incremental"]
  ]
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const decision = decidePass({ ...base, ...input })
      expect(decision._tag === "Full" ? `Full:${decision.reason}` : decision._tag).toBe(expected)
    })
  }

  it("an incremental pass reads from the mark minus the overlap", () => {
    const decision = decidePass(base)
    if (decision._tag !== "Incremental") throw new Error(decision._tag)
    expect(decision.since.getTime()).toBe(now - 2 * hour - 5 * 60_000)
  })

  it("with no mark (no row ever seen) it reads from the start of the last full pass minus the overlap", () => {
    const decision = decidePass({ ...base, checkpoint: checkpoint({ highWaterMark: null }) })
    if (decision._tag !== "Incremental") throw new Error(decision._tag)
    expect(decision.since.getTime()).toBe(now - 3 * hour - 5 * 60_000)
  })

  it("an up-to-date stream says when its full pass is due", () => {
    const decision = decidePass({ ...base, incremental: fullPassesOnly })
    if (decision._tag !== "UpToDate") throw new Error(decision._tag)
    expect(decision.nextFullPassAt.getTime()).toBe(now - 3 * hour + 24 * hour)
  })
})

describe("incremental strategies", () => {
  const since = at(hour)
  it("newest-first stops at the first page whose rows are all older than `since`", () => {
    const pass = Option.getOrThrow(newestFirst({}).plan(since))
    expect(pass.endsAfter({ updatedAtMs: [now, now - 2 * hour], hasNextPage: true })).toBe(false)
    expect(pass.endsAfter({ updatedAtMs: [now - 2 * hour, now - 3 * hour], hasNextPage: true })).toBe(true)
  })

  it("updatedSince filters from `since` and pages to the end", () => {
    const pass = Option.getOrThrow(updatedSince((iso) => ({ filter: { updatedAt: { after: iso } } })).plan(since))
    expect(pass.variables).toEqual({ filter: { updatedAt: { after: since.toISOString() } } })
    expect(pass.endsAfter({ updatedAtMs: [now - 9 * hour], hasNextPage: true })).toBe(false)
  })

  it("fullPassesOnly plans no incremental pass", () => {
    expect(Option.isNone(fullPassesOnly.plan(since))).toBe(true)
  })
})

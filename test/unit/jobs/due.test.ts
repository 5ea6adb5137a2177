import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import { nextDueAt } from "../../../src/jobs/DueSchedule.js"
import { followUpOf, priorityOf } from "../../../src/jobs/JobKinds.js"
import type { Checkpoint } from "../../../src/sync/model.js"
import { allStreams } from "../../../src/sync/streams/index.js"

const jobs = allStreams.find((s) => s.name === "jobs")!
const fullOnly = allStreams.find((s) => s.incremental.plan(new Date(0))._tag === "None")

const at = (iso: string) => new Date(iso)
const checkpoint = (c: Partial<Checkpoint>): Checkpoint => ({
  passKind: null,
  partition: 0,
  position: 0,
  anchors: [],
  shifted: false,
  tracksSeen: false,
  passStartedAt: null,
  highWaterMark: null,
  lastFullPassAt: null,
  fullPassRequestedAt: null,
  lastIncrementalPassAt: null,
  ...c
})
const input = (stream: typeof jobs, c: Checkpoint | undefined) => ({
  streams: [{ stream, fullPassEvery: Duration.days(1) }],
  checkpoints: c === undefined ? undefined : new Map([[stream.name, c]]),
  connectedAt: at("2026-01-01T00:00:00Z"),
  incrementalEvery: Duration.minutes(15),
  now: at("2026-01-05T00:00:00Z")
})

describe("an account's next due time", () => {
  it("never synced: due since it was connected", () => {
    expect(nextDueAt(input(jobs, undefined))).toEqual(at("2026-01-01T00:00:00Z"))
  })
  it("never synced, connected by a service clock ahead of ours: due now, not when our clock reaches its time", () => {
    const ahead = { ...input(jobs, undefined), connectedAt: at("2026-01-05T00:03:00Z") }
    expect(nextDueAt(ahead)).toEqual(at("2026-01-05T00:00:00Z"))
  })
  it("a full pass in progress: due since it began", () => {
    expect(nextDueAt(input(jobs, checkpoint({ passKind: "full", passStartedAt: at("2026-01-02T00:00:00Z") })))).toEqual(at("2026-01-02T00:00:00Z"))
  })
  it("incremental access: SYNC_INCREMENTAL_EVERY after the last incremental pass", () => {
    const c = checkpoint({ lastFullPassAt: at("2026-01-02T00:00:00Z"), lastIncrementalPassAt: at("2026-01-02T01:00:00Z") })
    expect(nextDueAt(input(jobs, c))).toEqual(at("2026-01-02T01:15:00Z"))
  })
  it("a full pass asked for by a change event: due then", () => {
    const c = checkpoint({ lastFullPassAt: at("2026-01-02T00:00:00Z"), lastIncrementalPassAt: at("2026-01-02T01:00:00Z"), fullPassRequestedAt: at("2026-01-02T01:05:00Z") })
    expect(nextDueAt(input(jobs, c))).toEqual(at("2026-01-02T01:05:00Z"))
  })
  it.skipIf(fullOnly === undefined)("no incremental access: the full-pass cadence after the last one", () => {
    const c = checkpoint({ lastFullPassAt: at("2026-01-02T00:00:00Z"), lastIncrementalPassAt: at("2026-01-02T01:00:00Z") })
    expect(nextDueAt(input(fullOnly!, c))).toEqual(at("2026-01-03T00:00:00Z"))
  })
})

describe("job priority and follow-ups", () => {
  const now = Date.parse("2026-01-01T01:00:00Z")
  it("the most overdue first; events and backfills count an hour overdue from the start", () => {
    expect(priorityOf({ kind: "sync", accountId: "a", dueAt: "2026-01-01T00:00:00Z" }, now)).toBe(3600)
    expect(priorityOf({ kind: "sync", accountId: "a", dueAt: "2026-01-01T00:59:00Z" }, now)).toBe(60)
    expect(priorityOf({ kind: "sync", accountId: "a", dueAt: "2026-01-01T02:00:00Z" }, now)).toBe(0)
    expect(priorityOf({ kind: "events", accountId: "a", dueAt: "2026-01-01T01:00:00Z" }, now)).toBe(3600)
  })
  it("a follow-up is due now (behind those that waited longer) and never restarts again", () => {
    const next = followUpOf({ kind: "backfill", accountId: "a", dueAt: "2026-01-01T00:00:00Z", requestedAt: "2026-01-01T00:00:00Z", restart: true }, now)
    expect(next).toEqual({ kind: "backfill", accountId: "a", dueAt: "2026-01-01T01:00:00.000Z", requestedAt: "2026-01-01T00:00:00Z", restart: false })
  })
})

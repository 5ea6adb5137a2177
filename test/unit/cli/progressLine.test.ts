import { describe, expect, it } from "@effect/vitest"
import { progressLine } from "../../../src/cli/live/progressLine.js"
import { displayWidth } from "../../../src/cli/output/text.js"
import type { ProgressSnapshot } from "../../../src/run/Progress.js"
import { accountRemainingMs, expectedPointsPerRow, remainingMs, runRemainingMs } from "../../../src/run/progressEstimate.js"
import { RunEstimate } from "../../../src/cli/live/runEstimate.js"
import { zeroCounts } from "../../../src/run/Runs.js"

const now = 1_000_000
const snapshot = (over: Partial<ProgressSnapshot> = {}): ProgressSnapshot => ({
  accountId: "Z2lkOi8vc2VydmljZS9BY2NvdW50LzEwMDE=",
  accountName: "Northwind Landscaping",
  stream: "jobs",
  streamNumber: 7,
  streams: 9,
  kind: "full",
  runId: 1,
  counts: { ...zeroCounts, rows: 612, pages: 19, costPoints: 55_080, throttleWaitMs: 114_600 },
  startedAtMs: now - 102_000,
  expectedRows: 1000,
  landedBefore: 0,
  pointsPerRow: 90,
  requestedPointsPerRow: 360,
  bucket: { restoreRate: 500, available: 0 },
  ...over
})

describe("a live progress line", () => {
  it("names the account (not its id), the stream as k/n, rows of the service's count, time left, rate and waits", () => {
    const line = progressLine(snapshot(), now, 160)
    expect(line).toBe("Northwind Landscaping  jobs 7/9  [#######-----]  612/1,000 rows 61%  1 min 10 s left  6 rows/s  waited 1 min 55 s")
    expect(line).not.toContain("Z2lk")
  })

  it("never exceeds the width: the bar, the wait and the rate go first, then the name is shortened, then it is cut", () => {
    const long = snapshot({ accountName: `Bluebird Plumbing & Heating ${"of a very long name ".repeat(10)}` })
    for (let width = 20; width <= 200; width++) expect(displayWidth(progressLine(long, now, width)), `width ${width}`).toBeLessThanOrEqual(width)
    expect(progressLine(snapshot(), now, 80)).toBe("Northwind Landscaping  jobs 7/9  612/1,000 rows 61%  1 min 10 s left  6 rows/s")
    expect(progressLine(snapshot(), now, 60)).toBe("Northwind L…  jobs 7/9  612/1,000 rows 61%  1 min 10 s left")
  })

  it("shows a resumed pass's earlier rows, an incremental pass without a total, an ended stream's outcome", () => {
    expect(progressLine(snapshot({ landedBefore: 300 }), now, 160)).toContain("912/1,000 rows 91%")
    const incremental = progressLine(snapshot({ kind: "incremental", expectedRows: undefined }), now, 160)
    expect(incremental).toContain("jobs 7/9 incremental  612 rows  6 rows/s")
    expect(incremental).not.toContain("left")
    expect(progressLine(snapshot({ done: "succeeded" }), now, 160)).toContain("succeeded")
  })

  it("escapes control characters in a name from outside", () => {
    const line = progressLine(snapshot({ accountName: "evil\u001b[2J\u001b]0;owned\u0007" }), now, 160)
    expect(line).toMatch(/^evil\\u001b\[2J\\u001b\]0;/)
    expect(line).not.toMatch(/[\u0000-\u001f]/)
  })
})

describe("the time left of a pass", () => {
  it("is the slower of the bucket's pace and the pass's own", () => {
    // 1,000 rows at 90 points, 500 points restored a second, 10,000 in the bucket now: (90,000 - 10,000) / 500 = 160 s
    expect(remainingMs({ remainingRows: 1000, pointsPerRow: 90, bucket: { restoreRate: 500, available: 10_000 }, rowsPerSecond: 100 })).toBe(160_000)
    // an engine slower than the bucket: its own pace
    expect(remainingMs({ remainingRows: 1000, pointsPerRow: 1, bucket: { restoreRate: 500, available: 10_000 }, rowsPerSecond: 10 })).toBe(100_000)
    expect(remainingMs({ remainingRows: 1000, pointsPerRow: 90, bucket: undefined, rowsPerSecond: 0 })).toBeUndefined()
    expect(remainingMs({ remainingRows: 0, pointsPerRow: 90, bucket: undefined, rowsPerSecond: 0 })).toBe(0)
  })
})

describe("the time left of an account and of a run", () => {
  it("a stream not measured yet costs its requested points scaled by what the run measured against what it requested", () => {
    expect(expectedPointsPerRow(360, { points: 0, requested: 0 })).toBe(360)
    expect(expectedPointsPerRow(360, { points: 9_000, requested: 36_000 })).toBe(90)
  })

  it("an account: the rest of its stream, then its later streams' points at the restore rate; unknown while a count is", () => {
    const bucket = { restoreRate: 500, available: 0 }
    expect(accountRemainingMs({ streamMs: 18_000, later: [{ rows: 300, pointsPerRow: 90 }], bucket })).toBe(72_000)
    expect(accountRemainingMs({ streamMs: 18_000, later: [], bucket: undefined })).toBe(18_000)
    expect(accountRemainingMs({ streamMs: 18_000, later: [{ rows: undefined, pointsPerRow: 90 }], bucket })).toBeUndefined()
  })

  it("a run: the accounts running end after their time left; each waiting one takes the next free place", () => {
    // two places: 10 s and 30 s left; two accounts of 20 s wait: 10+20 = 30, then 30+20 = 50
    expect(runRemainingMs({ running: [10_000, 30_000], waiting: 2, perAccountMs: 20_000, concurrency: 2 })).toBe(50_000)
    expect(runRemainingMs({ running: [10_000], waiting: 0, perAccountMs: undefined, concurrency: 4 })).toBe(10_000)
    expect(runRemainingMs({ running: [undefined], waiting: 0, perAccountMs: 1, concurrency: 4 })).toBeUndefined()
  })

  it("the run line counts the accounts done, running and waiting, with the run's time left", () => {
    const estimate = new RunEstimate()
    estimate.runPlanned({ accounts: 3, concurrency: 1 })
    const plan = { accountId: "a", streams: [{ stream: "users", rows: 100, requestedPointsPerRow: 360 }, { stream: "jobs", rows: 200, requestedPointsPerRow: 360 }] }
    estimate.accountPlanned(plan, now - 10_000)
    const s = snapshot({ accountId: "a", stream: "users", streamNumber: 1, streams: 2, expectedRows: 100, startedAtMs: now - 1_000, counts: { ...zeroCounts, rows: 50, costPoints: 4_500 }, pointsPerRow: 90, bucket: { restoreRate: 500, available: 0 } })
    estimate.report(s, now)
    // users: 50 x 90 / 500 = 9 s; jobs 200 x 90 / 500 = 36 s: the account 45 s; it ran 10 s so far, so each of the 2 waiting takes 55 s
    expect(estimate.estimate(s, now).accountLeftMs).toBe(45_000)
    expect(estimate.runLine(now)).toBe("run: 0/3 accounts done, 1 running, 2 waiting  2 min 35 s left")
  })
})

import { describe, expect, it } from "@effect/vitest"
import { progressLine } from "../../../src/cli/live/progressLine.js"
import { displayWidth } from "../../../src/cli/output/text.js"
import type { ProgressSnapshot } from "../../../src/sync/Progress.js"
import { remainingMs } from "../../../src/sync/progressEstimate.js"
import { zeroCounts } from "../../../src/sync/Runs.js"

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

import { describe, expect, it } from "vitest"
import { CostMeter } from "../../../bench/lib/budgets.js"
import { bucketLoss } from "../../../bench/lib/bucketLoss.js"

const answer = (atMs: number, actual: number, available: number) => ({ atMs, requested: actual, actual, available, maximum: 100, restoreRate: 10 })

describe("bucketLoss", () => {
  it("splits the seconds beyond the floor into the bucket standing full and what it held at the end", () => {
    const meter = new CostMeter()
    // full at the start until the first charge (1 s), empty after it; a short gap; a gap 2 s longer than the 10 s
    // the bucket takes to fill; 30 points left at the last answer and 1 s after it
    meter.answers.push(answer(1_000, 100, 0), answer(3_000, 20, 0), answer(15_000, 70, 30))
    const loss = bucketLoss(meter, 0, 16_000)
    expect(loss).toEqual({ beforeFirstSec: 1, fullBetweenSec: 2, leftAtLastSec: 3, afterLastSec: 1, answersAfterFull: 1, answers: 3 })
    // the floor of the points charged (190) over the bucket (100) at 10 points/s: 9 s of the 16 s
    const floorSec = (190 - 100) / 10
    expect(loss.beforeFirstSec + loss.fullBetweenSec + loss.leftAtLastSec + loss.afterLastSec).toBeCloseTo(16 - floorSec, 9)
  })

  it("a run without answers lost all its time before the first", () => {
    expect(bucketLoss(new CostMeter(), 0, 5_000)).toMatchObject({ beforeFirstSec: 5, answers: 0 })
  })
})

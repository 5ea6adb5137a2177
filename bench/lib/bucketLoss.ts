import type { CostMeter } from "./budgets.js"

/**
 * Where a throttled run's seconds beyond its floor went, from its answers: `seconds - floor` is the restore the bucket
 * could not take (it was full) plus what it still held at the end, over the restore rate. Each answer reports the
 * bucket after its charge; the service charges the next query when it arrives, about when its answer is sent.
 */
export interface BucketLoss {
  /** From the run's start to its first answer: the bucket was full (the run's own start, before any query). */
  readonly beforeFirstSec: number
  /** Between answers, the time the bucket stood full (waits longer than it took to fill, gaps without a query). */
  readonly fullBetweenSec: number
  /** The points the bucket held after the last answer, over the restore rate (the last queries' reservations). */
  readonly leftAtLastSec: number
  /** From the last answer to the run's end (the pass's and the run's closing work). */
  readonly afterLastSec: number
  /** Answers whose bucket was, by their time, full before them (a query late by the reservation or the engine). */
  readonly answersAfterFull: number
  readonly answers: number
}

export const bucketLoss = (meter: CostMeter, startMs: number, endMs: number): BucketLoss => {
  const answers = meter.answers
  if (answers.length === 0) return { beforeFirstSec: (endMs - startMs) / 1000, fullBetweenSec: 0, leftAtLastSec: 0, afterLastSec: 0, answersAfterFull: 0, answers: 0 }
  let fullBetweenMs = 0
  let answersAfterFull = 0
  for (let i = 1; i < answers.length; i++) {
    const before = answers[i - 1]!
    const next = answers[i]!
    // the level before the next charge: the next answer's level plus its charge
    const levelThen = next.available + next.actual
    const fillMs = (Math.max(0, before.maximum - before.available) / before.restoreRate) * 1000
    const full = levelThen >= next.maximum - 1 ? Math.max(0, next.atMs - before.atMs - fillMs) : 0
    if (full > 0) answersAfterFull++
    fullBetweenMs += full
  }
  const last = answers[answers.length - 1]!
  return {
    beforeFirstSec: (answers[0]!.atMs - startMs) / 1000,
    fullBetweenSec: fullBetweenMs / 1000,
    leftAtLastSec: last.available / last.restoreRate,
    afterLastSec: (endMs - last.atMs) / 1000,
    answersAfterFull,
    answers: answers.length
  }
}

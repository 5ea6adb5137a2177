import { staticQueryCost } from "../api/costEstimate.js"
import type { BucketNow } from "./Progress.js"
import type { AnyStream } from "../sync/streams/Stream.js"

/** Points a full page asks per row (the budget reserves these; a page of parents with fewer children costs less). */
export const requestedPointsPerRow = (stream: AnyStream): number => {
  const variables = { first: stream.maxPageSize, offset: 0, ...Object.fromEntries(stream.children.map((c) => [c.firstVariable, c.innerPage])) }
  return staticQueryCost(stream.document, { ...stream.fullPass, ...variables }) / stream.maxPageSize
}

/**
 * How long the rest of a pass will take: the slower of two paces. The bucket's: the points the remaining rows cost
 * beyond what the bucket holds now, at its restore rate (a long pass runs at this pace once the bucket is drained).
 * The pass's own so far (rows landed per second), which also covers an engine slower than the bucket.
 */
export const remainingMs = (input: {
  readonly remainingRows: number
  readonly pointsPerRow: number
  readonly bucket: BucketNow | undefined
  readonly rowsPerSecond: number
}): number | undefined => {
  if (input.remainingRows <= 0) return 0
  const byBucket =
    input.bucket !== undefined && input.bucket.restoreRate > 0
      ? (Math.max(0, input.remainingRows * input.pointsPerRow - Math.max(0, input.bucket.available)) / input.bucket.restoreRate) * 1000
      : undefined
  const byPace = input.rowsPerSecond > 0 ? (input.remainingRows / input.rowsPerSecond) * 1000 : undefined
  if (byBucket === undefined) return byPace
  return byPace === undefined ? byBucket : Math.max(byBucket, byPace)
}

/**
 * Points a row will cost in a stream not measured yet: its requested cost scaled by what the rows landed so far cost
 * against what they requested (a page asks for its whole nested page sizes; the answer costs what it holds, 3-4x
 * less). `measured` is the points spent and the points those rows requested; nothing measured: the requested cost.
 */
export const expectedPointsPerRow = (requested: number, measured: { readonly points: number; readonly requested: number }): number =>
  measured.points > 0 && measured.requested > 0 ? requested * (measured.points / measured.requested) : requested

/**
 * How long the rest of an account's run will take: the rest of its current stream, then the points of the streams
 * after it at the bucket's restore rate (by then the bucket is drained). Unknown while a later stream's count or the
 * bucket is.
 */
export const accountRemainingMs = (input: {
  readonly streamMs: number | undefined
  readonly later: ReadonlyArray<{ readonly rows: number | undefined; readonly pointsPerRow: number }>
  readonly bucket: BucketNow | undefined
}): number | undefined => {
  if (input.streamMs === undefined) return undefined
  if (input.later.length === 0) return input.streamMs
  if (input.bucket === undefined || input.bucket.restoreRate <= 0 || input.later.some((l) => l.rows === undefined)) return undefined
  const points = input.later.reduce((n, l) => n + l.rows! * l.pointsPerRow, 0)
  return input.streamMs + (points / input.bucket.restoreRate) * 1000
}

/**
 * How long the rest of a run of many accounts will take, `concurrency` at once: the accounts running end after
 * their time left, and each account waiting takes the next free place for `perAccountMs` (what an account took or
 * is taking so far). Unknown while an account running has no estimate, or accounts wait and none is measured.
 */
export const runRemainingMs = (input: {
  readonly running: ReadonlyArray<number | undefined>
  readonly waiting: number
  readonly perAccountMs: number | undefined
  readonly concurrency: number
}): number | undefined => {
  if (input.running.some((ms) => ms === undefined)) return undefined
  if (input.waiting > 0 && input.perAccountMs === undefined) return undefined
  const places = [...(input.running as ReadonlyArray<number>)]
  while (places.length < Math.max(1, input.concurrency)) places.push(0)
  for (let i = 0; i < input.waiting; i++) {
    places.sort((a, b) => a - b)
    places[0] = places[0]! + input.perAccountMs!
  }
  return Math.max(0, ...places)
}

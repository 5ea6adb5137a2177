import { estimateQueryCost } from "../api/costEstimate.js"
import type { BucketNow } from "./Progress.js"
import type { AnyStream } from "./streams/Stream.js"

/** Points a full page asks per row (the budget reserves these; a page of parents with fewer children costs less). */
export const requestedPointsPerRow = (stream: AnyStream): number => {
  const variables = { first: stream.maxPageSize, offset: 0, ...Object.fromEntries(stream.children.map((c) => [c.firstVariable, c.innerPage])) }
  return estimateQueryCost(stream.document, { ...stream.fullPass, ...variables }) / stream.maxPageSize
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

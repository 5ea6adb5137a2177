/**
 * Drives the terminal progress display through one backfill of an account of three streams, in a process of its own
 * under a pseudo-terminal (see test/e2e/cli/liveAccountEta.test.ts). Each stream requests 360 points a row and its
 * rows cost 90 (a quarter); the bucket restores 500 points a second and is empty. It prints a marker after each step.
 */
import { Effect, Layer } from "effect"
import { ProgressTerminal } from "../../../src/cli/live/ProgressTerminal.js"
import { Progress, type ProgressSnapshot } from "../../../src/run/Progress.js"
import { zeroCounts } from "../../../src/run/Runs.js"

const plan = [
  { stream: "users", rows: 100 },
  { stream: "jobs", rows: 200 },
  { stream: "visits", rows: 300 }
]

const snapshot = (i: number, rows: number, done?: string): ProgressSnapshot => ({
  accountId: "acc-1",
  accountName: "Northwind Landscaping",
  stream: plan[i]!.stream,
  streamNumber: i + 1,
  streams: plan.length,
  kind: "full",
  runId: i + 1,
  counts: { ...zeroCounts, rows, pages: Math.ceil(rows / 50), costPoints: rows * 90 },
  // long enough ago that the pass's own pace is faster than the bucket's: the bucket sets the time left
  startedAtMs: Date.now() - 100,
  expectedRows: plan[i]!.rows,
  landedBefore: 0,
  pointsPerRow: rows > 0 ? 90 : 360,
  requestedPointsPerRow: 360,
  bucket: { restoreRate: 500, available: 0 },
  ...(done ? { done } : {})
})

const program = Effect.gen(function* () {
  const progress = yield* Progress
  const step = (marker: string) => Effect.zipRight(Effect.sleep("300 millis"), Effect.sync(() => console.log(marker)))
  yield* progress.runPlanned({ accounts: 1, concurrency: 4 })
  yield* progress.accountPlanned({ accountId: "acc-1", streams: plan.map((p) => ({ ...p, requestedPointsPerRow: 360 })) })
  // nothing measured yet: the requested cost (100 rows x 360 / 500 = 72 s; the account 600 x 360 / 500 = 7 min 12 s)
  yield* progress.report(snapshot(0, 0))
  yield* step("STEP first stream started")
  yield* progress.report(snapshot(0, 100, "succeeded"))
  // jobs half done: 100 rows x 90 / 500 = 18 s; visits then 300 x 360 x (90/360) / 500 = 54 s: the account 1 min 12 s
  yield* progress.report(snapshot(1, 100))
  yield* step("STEP second stream half done")
  yield* progress.report(snapshot(1, 200, "succeeded"))
  // visits not begun: its first estimate from the cost measured so far, 54 s (not 300 x 360 / 500 = 3 min 36 s)
  yield* progress.report(snapshot(2, 0))
  yield* step("STEP third stream started")
  yield* progress.report(snapshot(2, 300, "succeeded"))
  yield* progress.accountEnded("acc-1")
})

await Effect.runPromise(program.pipe(Effect.provide(ProgressTerminal), Effect.scoped))
console.log("DRIVER DONE")

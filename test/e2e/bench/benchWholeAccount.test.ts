import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { quickOptions, runBench } from "../../../bench/lib/bench.js"
import { allStreams } from "../../../src/sync/streams/index.js"

// The benchmarks at toy sizes: the same code paths as `npm run bench` (emulator child, real OAuth, real Postgres,
// a child `backfill` under /usr/bin/time), asserting what must hold at any size, not timings. One file a part, so
// they run side by side.
describe("npm run bench -- --only wholeAccount (smoke)", () => {
  it.live(
    "wholeAccount: every stream of one account, unthrottled then against a binding bucket, never throttled",
    () =>
      Effect.gen(function* () {
        const r = yield* runBench({ ...quickOptions, only: ["wholeAccount"] }, "smoke")
        const w = r.wholeAccount!
        expect(w.streams).toEqual(allStreams.map((s) => s.name))
        expect(w.throttled).toBe(0)
        // nobody beats the bucket
        expect(w.efficiency).toBeGreaterThan(0)
        expect(w.efficiency).toBeLessThanOrEqual(1.02)
        expect(w.efficiency).toBeCloseTo(w.floorSec / w.seconds, 6)
        expect(w.floorSec).toBeCloseTo((w.points - w.maxPoints) / w.restoreRate, 6)
        // the bucket binds: the floor is longer than the engine alone takes
        expect(w.floorSec).toBeGreaterThan(w.unthrottledSec)
        // a page asks for a full inner page of line items a parent: more than it is charged
        expect(w.requestedPoints).toBeGreaterThan(w.points)
        for (const stream of w.streams) expect(w.pointsPerRow[stream], stream).toBeGreaterThan(0)
        expect(r.landing).toBeUndefined()
      }),
    120_000
  )
})

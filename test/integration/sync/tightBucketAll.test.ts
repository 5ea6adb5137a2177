import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { onBucketClock } from "../../support/bucketClock.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectAccountExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

// A whole-account backfill (every stream, links, line items, custom fields) against a tight bucket: 2,000 points
// restoring at 100 a second. It spends ~20,000 points, so it waits ~3 minutes for the bucket: the connector runs on
// TestClock, moved with the emulator's to each wait's end (onBucketClock).
const limits = { maxPoints: 2_000, restoreRate: 100 }
const wholeAccount = {
  SYNC_STREAMS: "",
  SYNC_EXCLUDE_FIELDS: "",
  // no request timeout may fire while the driver moves the clock over a wait
  GRAPHQL_REQUEST_TIMEOUT: "1 hour",
  TOKEN_REQUEST_TIMEOUT: "1 hour"
}

/** A wait of the connector is at most a bucket's restore time; the timeouts (an hour) are never taken for one. */
const longestWaitMs = (limits.maxPoints / limits.restoreRate) * 1000 + 1000

layer(syncHarness({ jobs: 40, sizes: { users: 6, products: 20 }, limits }, { env: wholeAccount }), { timeout: 120_000, excludeTestServices: true })(
  "tight bucket, whole account",
  (it) => {
    it.effect(
      "a backfill of every stream ends with 0 throttled answers, waiting for what it spends beyond one bucket",
      () =>
        Effect.gen(function* () {
          const { accounts, admin } = yield* TestEmulator
          const accountId = accounts[0]!.accountId
          yield* connectAccount(accountId)
          yield* admin.resetStats()
          const { result: reports, movedMs } = yield* onBucketClock(longestWaitMs, Effect.flatMap(SyncRunner, (runner) => runner.run({ mode: "backfill" })))

          expect(reports.map((r) => r.outcome)).toEqual(["synced"])
          const streams = reports[0]!.streams
          expect(streams.map((s) => s.stream)).toEqual(allStreams.map((s) => s.name))
          expect(yield* admin.stats()).toMatchObject({ throttled: 0, rateLimited: 0 })
          for (const s of streams) expect([s.stream, s.counts.throttled]).toEqual([s.stream, 0])
          // the bucket bound the run: it waited for (nearly) every point spent beyond the first bucket
          const points = streams.reduce((n, s) => n + s.counts.costPoints, 0)
          const waitedMs = streams.reduce((n, s) => n + s.counts.throttleWaitMs, 0)
          expect(points).toBeGreaterThan(5 * limits.maxPoints)
          expect(waitedMs).toBeGreaterThanOrEqual(((points - limits.maxPoints) / limits.restoreRate) * 1000 * 0.9)
          expect(movedMs).toBeGreaterThanOrEqual(waitedMs * 0.9)
          const counts = yield* expectAccountExact(allStreams, accountId)
          expect(counts.jobs).toBe(40)
        }),
      120_000
    )
  }
)

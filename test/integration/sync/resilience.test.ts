import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { pagesToRead, syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"

const jobsStream = jobScalarsStream

// A tight bucket on the emulator's real clock: 1,000 points restoring at 200/s. A page of 32 jobs costs 993 points,
// so each account waits ~5 s per page; 3 accounts x 100 jobs run concurrently in ~15 s.
layer(syncHarness({ accounts: 3, jobs: 100, limits: { maxPoints: 1000, restoreRate: 200 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("tight bucket", (it) => {
  it.effect("the backfill completes with zero throttled answers, sizing pages to the bucket", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      yield* admin.resetStats()
      const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
      expect(reports.map((r) => r.outcome)).toEqual(["synced", "synced", "synced"])
      const stats = yield* admin.stats()
      expect(stats.throttled).toBe(0)
      expect(stats.rateLimited).toBe(0)
      for (const r of reports) {
        const c = r.streams[0]!.counts
        expect(c.throttled).toBe(0)
        // `first` chosen so that one page fits the whole bucket: 1 + first x (points a job) <= 1000
        const perJob = estimateQueryCost(jobsStream.document, { first: 1 }) - 1
        expect(c.pages).toBe(pagesToRead(100, Math.floor(999 / perJob)))
        // the bucket (1,000 points, 200 a second) is what bounds the run: it waited for what it spent beyond one bucket
        expect(c.costPoints).toBeGreaterThan(2500)
        expect(c.throttleWaitMs).toBeGreaterThanOrEqual(((c.costPoints - 1000) / 200) * 1000 * 0.9)
      }
      for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(100)
    })
  )
})

layer(syncHarness({ accounts: 3, jobs: 2000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("faults", (it) => {
  it.effect("5% 5xx, dropped connections, truncated bodies and latency still end with an exact warehouse", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      yield* admin.resetStats()
      yield* admin.setFaults({ errorRate: 0.05, dropRate: 0.05, truncateRate: 0.05, latencyRate: 0.2, latencyMs: 300, seed: 11 })
      const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
      yield* admin.setFaults({})
      expect(reports.map((r) => [r.outcome, r.message])).toEqual(accounts.map(() => ["synced", undefined]))
      const { faultsInjected } = yield* admin.stats()
      expect(faultsInjected.error).toBeGreaterThan(0)
      expect(faultsInjected.drop).toBeGreaterThan(0)
      expect(faultsInjected.truncate).toBeGreaterThan(0)
      expect(faultsInjected.latency).toBeGreaterThan(0)
      for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(2000)
    })
  )
})

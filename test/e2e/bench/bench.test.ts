import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { quickOptions, runBench } from "../../../bench/lib/bench.js"

// The benchmarks at toy sizes: the same code paths as `npm run bench` (emulator child, real OAuth, real Postgres,
// a child `backfill` under /usr/bin/time), asserting what must hold at any size, not timings. One file a part, so
// they run side by side.
describe("npm run bench (smoke)", () => {
  it.live(
    "measures every figure, and the figures obey their physical bounds",
    () =>
      Effect.gen(function* () {
        const r = yield* runBench(
          {
            ...quickOptions,
            // wholeAccount and scale have their own files (benchWholeAccount, benchScale)
            only: ["landing", "writePath", "budget", "memory", "accounts", "exactness", "freshness", "history"],
            writePathJobs: 1_000,
            historyJobs: 1_000,
            budgetJobs: 2_000,
            // the bucket must bind the reactive baseline, which waits for nothing: on a loaded machine 2,000 jobs took
            // it 4.1 s, slower than a 2 s floor's restore, and it was never throttled
            floorSec: 6,
            landingJobs: 2_000,
            memoryJobs: [500],
            accounts: 4,
            jobsPerAccount: 200,
            concurrencies: [4],
            exactnessJobs: 1_000,
            freshness: { accounts: 3, jobsPerAccount: 150, editsPerSecond: 4, seconds: 3, burstPerSecond: 100, burstSeconds: 1, burstLoadWorkers: 2, burstLoadJobs: 20_000 }
          },
          "smoke"
        )
        expect(r.machine).toMatch(/cores/)
        expect(Date.parse(r.takenAt)).not.toBeNaN()

        const budget = r.budget!
        // our budget waits before a query would be throttled; the reactive baseline learns by being throttled
        expect(budget.throttled).toBe(0)
        expect(budget.reactive.throttled).toBeGreaterThan(0)
        // nobody beats the bucket: the floor is a lower bound of the time
        expect(budget.efficiency).toBeGreaterThan(0)
        expect(budget.efficiency).toBeLessThanOrEqual(1.02)
        expect(budget.reactive.efficiency).toBeLessThanOrEqual(1.02)
        expect(budget.requestedPoints).toBeGreaterThanOrEqual(20 * budget.pageCost)
        expect(budget.speedupVsReactive).toBeCloseTo(budget.reactive.seconds / budget.seconds, 6)

        const landing = r.landing!
        expect(landing.rowsPerSec).toBeGreaterThan(0)
        expect(landing.copyRowsPerSec).toBeGreaterThan(0)
        expect(landing.copyRatio).toBeCloseTo(landing.rowsPerSec / landing.copyRowsPerSec, 6)
        expect(landing.cpuSecPer10k).toBeGreaterThan(0)
        // fetching alone: the bench itself fails unless every job was fetched; here, that it was timed and costed
        expect(landing.fetchOnly.copyRatio).toBeGreaterThan(0)
        expect(landing.fetchOnly.cpuSecPer10k).toBeGreaterThan(0)
        expect(landing.fetchOnly.emulatorCpuSecPer10k).toBeGreaterThan(0)
        // the bound its CPU per row allows: the cores over the three processes' CPU per row
        const perRow = landing.cpuSecPer10k + landing.postgresCpuSecPer10k + landing.emulatorCpuSecPer10k
        expect(landing.cpuBound.rowsPerSec).toBeCloseTo((landing.cpuBound.cores * 10_000) / perRow, 6)
        expect(landing.cpuBound.copyRatio).toBeCloseTo(landing.cpuBound.rowsPerSec / landing.copyRowsPerSec, 6)

        // the write path alone, two ways over the same pages: the bench itself fails unless both landed every job
        // alike; here, that each way was timed against COPY and cost the connector and Postgres something
        const w = r.writePath!
        expect(w.copyRunsSeconds).toHaveLength(3)
        for (const way of [w.pageStatement, w.copyAndMerge]) {
          expect(way.copyRatio).toBeGreaterThan(0)
          expect(way.connectorCpuSecPer10k).toBeGreaterThan(0)
          expect(way.postgresCpuSecPer10k).toBeGreaterThan(0)
        }

        // history: two backfills each way; every job one version, which takes bytes
        const h = r.history!
        expect(h.runs.map((x) => x.history)).toEqual([false, true, false, true])
        expect(h.ratio).toBeCloseTo(h.rowsPerSecondWith / h.rowsPerSecondWithout, 6)
        expect(h.versions).toBe(1_000)
        expect(h.bytesPerVersion).toBeGreaterThan(100)

        expect(r.memory!.runs).toHaveLength(1)
        expect(r.memory!.peakRssMb100k).toBeGreaterThan(20)

        expect(r.accounts).toHaveLength(1)
        const a = r.accounts![0]!
        expect(a.concurrency).toBe(4)
        expect(a.rowsPerSec).toBeGreaterThan(0)
        expect(a.ratioToCeiling).toBeCloseTo(a.rowsPerSec / a.ceilingRowsPerSec, 6)

        // a page of 100 re-reads one row to join: 1% of the pages' points at least, plus the end-of-pass count
        const e = r.exactness!
        expect(e.plainPoints).toBeGreaterThan(0)
        expect(e.overheadPoints).toBeGreaterThan(0)
        expect(e.overheadRatio).toBeCloseTo(e.overheadPoints / e.plainPoints, 6)
        expect(e.overheadRatio).toBeLessThan(0.05)

        // webhooks: every edit landed after it was made; each changed row was read at least once, at a node's cost
        const f = r.freshness!
        expect(f.edits).toBe(12)
        expect(f.changedRows).toBeGreaterThan(0)
        expect(f.changedRows).toBeLessThanOrEqual(f.edits)
        expect(f.p50Seconds).toBeGreaterThan(0)
        expect(f.p50Seconds).toBeLessThanOrEqual(f.p99Seconds)
        expect(f.p99Seconds).toBeLessThanOrEqual(f.maxSeconds)
        expect(f.pointsPerChangedRow).toBeGreaterThanOrEqual(f.nodeCost)
        expect(f.ratioToNodeCost).toBeCloseTo(f.pointsPerChangedRow / f.nodeCost, 6)
        // polling every 15 minutes: the wait for the next poll is uniform over the period, plus the poll's run
        expect(Math.abs(f.polling.p50Seconds - (450 + f.polling.runSeconds))).toBeLessThanOrEqual(1)
        expect(Math.abs(f.polling.p99Seconds - (891 + f.polling.runSeconds))).toBeLessThanOrEqual(1)
        expect(f.polling.pointsPerChangedRow).toBeGreaterThanOrEqual(f.nodeCost)
        expect(f.burst.deliveries).toBe(100)
        // answered while the two workers' backfills landed rows on the same Postgres
        expect(f.burst.loadWorkers).toBe(2)
        expect(f.burst.loadRowsDuringBurst).toBeGreaterThan(0)
        expect(f.webhookAnswerP99Ms).toBeGreaterThan(0)
        expect(f.webhookAnswerP99Ms).toBeLessThanOrEqual(f.burst.maxMs)
      }),
    600_000
  )
})

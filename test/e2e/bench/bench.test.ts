import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { quickOptions, runBench } from "../../../bench/lib/bench.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { hasRuns } from "../../../bench/lib/scale.js"

// The benchmarks at toy sizes: the same code paths as `npm run bench` (emulator child, real OAuth, real Postgres,
// a child `backfill` under /usr/bin/time), asserting what must hold at any size, not timings.
describe("npm run bench (smoke)", () => {
  it.live(
    "measures every figure, and the figures obey their physical bounds",
    () =>
      Effect.gen(function* () {
        const r = yield* runBench(
          {
            ...quickOptions,
            // wholeAccount has its own test below
            only: ["landing", "writePath", "budget", "memory", "accounts", "exactness", "freshness", "history"],
            writePathJobs: 1_000,
            historyJobs: 1_000,
            budgetJobs: 2_000,
            floorSec: 2,
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
    300_000
  )

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

describe("npm run bench -- --only scale (smoke)", () => {
  it.live(
    "workers over many accounts: every figure measured, no account run twice at once, failover within the heartbeat's bound",
    () =>
      Effect.gen(function* () {
        const r = yield* runBench({ ...quickOptions, only: ["scale"] }, "smoke")
        const s = r.scale!
        if (!hasRuns(s)) return expect.fail("the scale smoke ran only its idle cycle")
        expect(s.idleCycle.accounts).toBe(quickOptions.scale.idleCycle.accounts)
        expect(s.idleCycle.statementsPerAccount).toBeGreaterThan(0)
        expect(s.idleCycle.connectorCpuMsPerAccount).toBeGreaterThan(0)
        expect(s.claimsPerSecond).toBeGreaterThan(0)
        expect(s.dueToStartP50Seconds).toBeGreaterThanOrEqual(0)
        expect(s.dueToStartP50Seconds).toBeLessThanOrEqual(s.dueToStartP99Seconds)
        expect(s.doubleRuns).toBe(0)
        // heartbeat 10 s + monitor 2 s + retry 1 s + polling: well inside a minute
        expect(s.failoverSeconds).toBeGreaterThan(0)
        expect(s.failoverSeconds).toBeLessThanOrEqual(60)
        // a worker SIGKILLed with the backfill cap full: its accounts run again ahead of the waiting backfills
        expect(s.failoverSecondsUnderCap).toBeGreaterThan(0)
        expect(s.failoverSecondsUnderCap).toBeLessThanOrEqual(30)
        // a worker SIGSTOPped: its leases (30 s) lapse and a live worker takes its accounts
        expect(s.hungWorkerReleaseSeconds).toBeGreaterThan(0)
        expect(s.hungWorkerReleaseSeconds).toBeLessThanOrEqual(60)
        expect(s.workers.map((w) => w.processes)).toEqual(quickOptions.scale.processes)
        for (const w of s.workers) {
          expect(w.rowsPerSecond).toBeGreaterThan(0)
          // nobody beats the buckets
          expect(w.ratioToCeiling).toBeGreaterThan(0)
          expect(w.ratioToCeiling).toBeLessThanOrEqual(1.05)
          expect(w.cpuSecondsPerWorker).toBeGreaterThan(0)
          expect(w.peakRssMbPerWorker).toBeGreaterThan(20)
          expect(["bucket", "slots", "emulator", "cpu", "postgres", "other"]).toContain(w.bound)
          // measured: the bucket's wait is a share of the accounts' time, and the CPU one of the cores
          expect(w.shares.bucketWait).toBeGreaterThan(0)
          expect(w.shares.bucketWait).toBeLessThanOrEqual(1)
          expect(w.shares.machineCpu).toBeGreaterThan(0)
          expect(w.shares.machineCpu).toBeLessThanOrEqual(1)
        }
        expect(s.oneWorker1000?.accounts).toBe(quickOptions.scale.accounts)
        expect(s.oneWorker1000?.peakRssMb).toBeGreaterThan(20)
        expect(s.oneWorker500?.accounts).toBe(quickOptions.scale.oneWorkerAccounts)
        expect(s.oneWorker500?.ratioToCeiling).toBeLessThanOrEqual(1.05)
        expect(s.oneWorker500?.peakRssMb).toBeGreaterThan(20)
      }),
    // the healing runs: two backfill phases of 8 and 2 accounts at 400 ms an answer
    480_000
  )
})

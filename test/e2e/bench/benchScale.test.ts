import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { quickOptions, runBench } from "../../../bench/lib/bench.js"
import { hasRuns } from "../../../bench/lib/scale.js"

// The benchmarks at toy sizes: the same code paths as `npm run bench` (emulator child, real OAuth, real Postgres,
// a child `backfill` under /usr/bin/time), asserting what must hold at any size, not timings. One file a part, so
// they run side by side.
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
        // under contention: backfills of other accounts were waiting for the cap when the kill came
        expect(s.backfillsWaitingAtCapKill).toBeGreaterThan(0)
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
    900_000
  )
})

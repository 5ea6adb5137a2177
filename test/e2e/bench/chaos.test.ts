import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runChaos } from "../../../bench/lib/chaos.js"
import { quickChaos } from "../../../bench/lib/chaosQuick.js"

// The chaos run reduced: 2 accounts x 400 jobs, a worker SIGKILLed 3 times (once with the backfill cap full and a
// backfill waiting), SIGSTOPped once until a live worker holds its accounts, its Postgres sessions terminated, one
// account revoked by a sandbox session and reconnected, 5xx/drops/truncation/latency throughout; Postgres's own write
// log counts no write by a fenced worker.
describe("npm run chaos (reduced)", () => {
  it.live(
    "loses nothing: the warehouse equals the emulator, no rotation is lost, no run is left running",
    () =>
      Effect.gen(function* () {
        const report = yield* runChaos(quickChaos(20_251_122))
        const failed = report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)
        expect(failed).toEqual([])
        expect(report.kills).toBeGreaterThanOrEqual(3)
        expect(report.terminations).toBeGreaterThanOrEqual(1)
        expect(report.revoked).toBeDefined()
        expect(report.hangs.length).toBeGreaterThanOrEqual(1)
        expect(report.capKill?.waiting).toBeGreaterThan(0)
        expect(report.writeLog).toMatchObject({ fenced: 0, unleased: 0 })
        expect(report.writeLog.writes).toBeGreaterThan(0)
      }),
    // the SIGSTOP waits out a lease (10 s) and a heartbeat; the cap of 1 runs the backfills one after the other
    900_000
  )
})

import { describe, expect, it } from "vitest"
import { mergeResults } from "../../../bench/lib/bench.js"
import { pollingLags } from "../../../bench/lib/freshnessResult.js"
import { quantile } from "../../../bench/lib/quantile.js"
import type { BenchResults } from "../../../bench/lib/report.js"

const run = (extra: Partial<BenchResults>, takenAt: string, command: string) =>
  ({ machine: "m", machineDetails: {}, takenAt, command, totalSeconds: 5, ...extra }) as unknown as BenchResults

describe("bench/results.json", () => {
  it("a partial run replaces the figures it made, keeps the others with their run's metadata, and is listed under updates", () => {
    const earlier = { ...run({}, "2026-01-01T00:00:00Z", "npm run bench"), landing: { rowsPerSec: 1 }, budget: { efficiency: 0.99 } } as unknown as Record<string, unknown>
    const merged = mergeResults(earlier, run({ freshness: { p50Seconds: 1 } as never }, "2026-02-02T00:00:00Z", "npm run bench -- --only freshness"))
    expect(merged).toMatchObject({
      takenAt: "2026-01-01T00:00:00Z",
      command: "npm run bench",
      landing: { rowsPerSec: 1 },
      budget: { efficiency: 0.99 },
      freshness: { p50Seconds: 1 },
      updates: [{ takenAt: "2026-02-02T00:00:00Z", command: "npm run bench -- --only freshness", benchmarks: ["freshness"] }]
    })
    // a run that made everything the file had replaces it
    const full = run({ landing: { rowsPerSec: 2 } as never, budget: { efficiency: 1 } as never, freshness: { p50Seconds: 2 } as never }, "2026-03-03T00:00:00Z", "npm run bench")
    expect(mergeResults(merged, full)).toEqual({ ...full })
  })

  it("a scale run of some parts (the idle cycle alone) replaces only their figures: the earlier scale figures, settings and load stay", () => {
    const scale = { workers: [{ processes: 1 }], claimsPerSecond: 400, settings: { accounts: 1000 }, loadAverageBefore: [1], idleCycle: { accounts: 1000, statementsPerAccount: 90 } }
    const earlier = { ...run({}, "2026-01-01T00:00:00Z", "npm run bench"), landing: { rowsPerSec: 1 }, scale } as unknown as Record<string, unknown>
    const idle = { idleCycle: { accounts: 20, statementsPerAccount: 55 }, settings: { accounts: 1000, parts: ["idle"] }, loadAverageBefore: [20] }
    const merged = mergeResults(earlier, run({ scale: idle as never }, "2026-02-02T00:00:00Z", "npm run bench -- --only scale --scale-idle-only"))
    expect(merged.scale).toEqual({ ...scale, idleCycle: idle.idleCycle })
    expect(merged).toMatchObject({ command: "npm run bench", landing: { rowsPerSec: 1 }, updates: [{ command: "npm run bench -- --only scale --scale-idle-only", benchmarks: ["scale"] }] })
    // the healing parts alone: their two figures replace the earlier ones, nothing else moves
    const healing = { failoverSecondsUnderCap: 7, hungWorkerReleaseSeconds: 27, doubleRuns: 0, settings: { parts: ["healing"] }, loadAverageBefore: [9] }
    const again = mergeResults(merged, run({ scale: healing as never }, "2026-02-03T00:00:00Z", "npm run bench -- --only scale --scale-parts healing"))
    expect(again.scale).toEqual({ ...scale, idleCycle: idle.idleCycle, failoverSecondsUnderCap: 7, hungWorkerReleaseSeconds: 27, doubleRuns: 0 })
  })

  it("polling lag: the wait for the next poll is uniform over the period, plus the run", () => {
    const lags = pollingLags([0, 7.3, 29.9], 900, 2)
    expect(lags).toHaveLength(3 * 900)
    expect(Math.min(...lags)).toBeGreaterThanOrEqual(2)
    expect(Math.max(...lags)).toBeLessThanOrEqual(902)
    expect(quantile(lags, 0.5)).toBeCloseTo(452, 0)
    expect(quantile(lags, 0.99)).toBeCloseTo(893, 0)
    expect(quantile([3, 1, 2], 0.5)).toBe(2)
  })
})

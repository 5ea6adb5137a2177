import type { AccountsRun, MemoryRun } from "./benchmarks.js"
import type { BudgetResult } from "./budgetBench.js"
import type { ExactnessResult } from "./exactness.js"
import type { HistoryResult } from "./history.js"
import type { LandingResult } from "./landing.js"
import type { WholeAccountResult } from "./wholeAccount.js"
import type { FreshnessResult } from "./freshnessResult.js"
import type { MachineInfo } from "./machine.js"
import { hasRuns, type ScaleResult } from "./scale.js"
import type { WritePathResult } from "./writePath.js"

export interface BenchResults {
  readonly machine: string
  readonly machineDetails: MachineInfo
  readonly takenAt: string
  readonly command: string
  readonly budget?: BudgetResult & { readonly goal: { readonly efficiency: number; readonly throttled: number; readonly speedupVsReactive: number } }
  readonly landing?: LandingResult & { readonly goal: { readonly copyRatio: number } }
  readonly writePath?: WritePathResult & { readonly goal: { readonly copyRatio: number } }
  readonly history?: HistoryResult
  readonly memory?: {
    readonly peakRssMb100k?: number
    readonly peakRssMb?: number
    readonly runs: ReadonlyArray<MemoryRun>
    readonly goal: { readonly peakRssMb: number }
  }
  readonly accounts?: ReadonlyArray<AccountsRun>
  readonly exactness?: ExactnessResult & { readonly goal: { readonly overheadRatio: number } }
  readonly freshness?: FreshnessResult & { readonly goal: { readonly p99Seconds: number; readonly ratioToNodeCost: number; readonly webhookAnswerP99Ms: number; readonly duringBackfillP99Seconds?: number } }
  readonly wholeAccount?: WholeAccountResult & { readonly goal: { readonly efficiency: number; readonly throttled: number } }
  readonly scale?: ScaleResult & {
    readonly goal: {
      readonly claimsPerSecond: number
      readonly dueToStartP99Seconds: number
      readonly failoverSeconds: number
      readonly failoverSecondsUnderCap: number
      readonly hungWorkerReleaseSeconds: number
      readonly doubleRuns: number
      readonly oneWorker500RatioToCeiling: number
      readonly oneWorker500PeakRssMb: number
    }
  }
  readonly totalSeconds: number
  /**
   * Benchmarks run since the full run the rest describes (`--only`): which, when, by what command; the other
   * figures are the full run's.
   */
}

const f = (n: number | undefined, digits = 2) => (n === undefined ? "-" : n.toFixed(digits))
const int = (n: number | undefined) => (n === undefined ? "-" : Math.round(n).toLocaleString("en-US"))
const mark = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "ok" : "MISSED")

const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/** The printed table: one line per figure, its goal and whether it was met. */
export const renderResults = (r: BenchResults): string => {
  const rows: Array<Array<string>> = [["benchmark", "figure", "value", "goal", ""]]
  if (r.budget) {
    const b = r.budget
    rows.push(["budget", `efficiency (floor ${f(b.floorSec, 1)} s / ${f(b.seconds, 1)} s)`, f(b.efficiency, 3), ">= 0.97", mark(b.efficiency >= 0.97)])
    rows.push(["budget", "throttled answers", String(b.throttled), "0", mark(b.throttled === 0)])
    rows.push(["budget", `reactive efficiency (${f(b.reactive.seconds, 1)} s)`, f(b.reactive.efficiency, 3), "", ""])
    rows.push(["budget", "reactive throttled answers", String(b.reactive.throttled), "", ""])
    rows.push(["budget", "speedup vs reactive", `${f(b.speedupVsReactive)}x`, ">= 1.3x", mark(b.speedupVsReactive >= 1.3)])
    rows.push(["budget", `(${int(b.jobs)} jobs, bucket ${int(b.maxPoints)} pts, restore ${int(b.restoreRate)} pts/s, page ${b.pageCost} pts)`, "", "", ""])
  }
  if (r.landing) {
    const l = r.landing
    rows.push(["landing", `rows/s end to end (${int(l.jobs)} jobs, ${f(l.seconds, 1)} s)`, int(l.rowsPerSec), "", ""])
    rows.push(["landing", `COPY rows/s (median of ${l.copyRunsSeconds.map((s) => f(s, 2)).join(" / ")} s)`, int(l.copyRowsPerSec), "", ""])
    rows.push(["landing", "ratio to COPY", f(l.copyRatio, 3), `>= ${l.goal.copyRatio}`, mark(l.copyRatio >= l.goal.copyRatio)])
    rows.push(["landing", "connector CPU s per 10k rows", f(l.cpuSecPer10k, 2), "", ""])
    if (l.postgresCpuSecPer10k !== undefined) rows.push(["landing", "Postgres CPU s per 10k rows", f(l.postgresCpuSecPer10k, 2), "", ""])
    if (l.emulatorCpuSecPer10k !== undefined) rows.push(["landing", "emulator CPU s per 10k rows", f(l.emulatorCpuSecPer10k, 2), "", ""])
    if (l.fetchOnly !== undefined) {
      const x = l.fetchOnly
      rows.push(["landing", "fetching alone (no landing): rows/s, ratio to COPY", `${int(x.rowsPerSec)}, ${f(x.copyRatio, 3)}`, "", ""])
      rows.push(["landing", "fetching alone: CPU s per 10k rows, connector / emulator", `${f(x.cpuSecPer10k)} / ${f(x.emulatorCpuSecPer10k)}`, "", ""])
    }
    if (l.cpuBound !== undefined) {
      rows.push(["landing", `the most ${l.cpuBound.cores} cores allow at that CPU per row: rows/s, ratio to COPY`, `${int(l.cpuBound.rowsPerSec)}, ${f(l.cpuBound.copyRatio, 3)}`, "", ""])
    }
  }
  if (r.writePath) {
    const w = r.writePath
    rows.push(["writePath", `(${int(w.jobs)} jobs landed without fetching, batches of ${w.batchPages} pages; COPY ${int(w.copyRowsPerSec)} rows/s, median of ${w.copyRunsSeconds.map((s) => f(s, 2)).join(" / ")} s)`, "", "", ""])
    for (const [name, way] of [["page statement", w.pageStatement], ["COPY + merge", w.copyAndMerge]] as const) {
      rows.push(["writePath", `${name}: rows/s, ratio to COPY`, `${int(way.rowsPerSec)}, ${f(way.copyRatio, 3)}`, name === "page statement" ? ">= 0.5" : "", name === "page statement" ? mark(way.copyRatio >= 0.5) : ""])
      rows.push(["writePath", `${name}: CPU s per 10k rows, connector / Postgres`, `${f(way.connectorCpuSecPer10k)} / ${f(way.postgresCpuSecPer10k)}`, "", ""])
    }
  }
  if (r.history) {
    const h = r.history
    rows.push(["history", `rows/s without history (${int(h.jobs)} jobs, mean of 2)`, int(h.rowsPerSecondWithout), "", ""])
    rows.push(["history", "rows/s with SYNC_HISTORY=jobs (mean of 2)", int(h.rowsPerSecondWith), "", ""])
    rows.push(["history", "ratio with / without", f(h.ratio, 3), "", ""])
    rows.push(["history", `bytes per job version (${int(h.versions)} versions)`, int(h.bytesPerVersion), "", ""])
  }
  if (r.memory) {
    for (const m of r.memory.runs) {
      rows.push(["memory", `peak RSS, ${int(m.jobs)} jobs (${f(m.seconds, 1)} s)`, `${f(m.peakRssMb, 1)} MB`, "< 200 MB", mark(m.peakRssMb < 200)])
    }
  }
  for (const a of r.accounts ?? []) {
    rows.push([
      "accounts",
      `${a.accounts} x ${int(a.jobsPerAccount)} jobs, concurrency ${a.concurrency} (${f(a.seconds, 1)} s)`,
      `${int(a.rowsPerSec)} rows/s`,
      `ceiling ${int(a.ceilingRowsPerSec)}`,
      `ratio ${f(a.ratioToCeiling, 3)} (running ${f(a.ratioToRunningCeiling, 3)})`
    ])
  }
  if (r.exactness) {
    const e = r.exactness
    rows.push(["exactness", `full pass overhead (${int(e.overheadPoints)} of ${int(e.plainPoints)} pts, ${int(e.jobs)} jobs)`, `${f(100 * e.overheadRatio, 2)}%`, "< 5%", mark(e.overheadRatio < 0.05)])
    rows.push(["exactness", "first backfill overhead", `${f(100 * e.backfill.overheadRatio, 2)}%`, "", ""])
  }
  if (r.freshness) {
    const x = r.freshness
    const p = x.polling
    rows.push(["freshness", `(${x.accounts} accounts x ${int(x.jobsPerAccount)} jobs, bucket 10,000 pts / 500 per s, ${x.edits} edits over ${f(x.seconds, 0)} s, ${x.changedRows} rows)`, "", "", ""])
    rows.push(["freshness", "webhooks: lag p50 / p99 (edit to row landed)", `${f(x.p50Seconds)} / ${f(x.p99Seconds)} s`, "p99 < 5 s", mark(x.p99Seconds < 5)])
    rows.push(["freshness", `webhooks: points per changed row (node ${x.nodeCost})`, `${f(x.pointsPerChangedRow, 1)} (${f(x.ratioToNodeCost)}x)`, "<= 1.1x", mark(x.ratioToNodeCost <= 1.1)])
    rows.push(["freshness", `polling every ${p.everyMinutes} min: lag p50 / p99 (run ${f(p.runSeconds, 1)} s)`, `${f(p.p50Seconds, 0)} / ${f(p.p99Seconds, 0)} s`, "", ""])
    rows.push(["freshness", "polling: points per changed row", `${f(p.pointsPerChangedRow, 1)} (${f(p.pointsPerChangedRow / x.nodeCost)}x)`, "", ""])
    rows.push(["freshness", `webhook answer p99 at the sender (${int(x.burst.deliveries)} at ${int(x.burst.perSecond)}/s, ${x.burst.loadWorkers} workers backfilling: ${int(x.burst.loadRowsDuringBurst)} rows meanwhile; steady ${f(x.webhookAnswerP99MsSteady, 1)} ms; ${int(x.burst.lost ?? 0)} lost; ${int(x.burst.retried ?? 0)} sent again)`, `${f(x.webhookAnswerP99Ms, 1)} ms`, "< 100 ms", mark(x.webhookAnswerP99Ms < 100)])
    if (x.duringBackfill) rows.push(["freshness", `mid-backfill: lag p99 (edit to row landed while its account's backfill ran; ${x.duringBackfill.landedMidBackfill} of ${x.duringBackfill.edits} edits)`, `${f(x.duringBackfillP99Seconds)} s`, "p99 < 5 s", mark(x.duringBackfillP99Seconds < 5)])
  }
  if (r.wholeAccount) {
    const w = r.wholeAccount
    rows.push(["wholeAccount", `efficiency (floor ${f(w.floorSec, 1)} s / ${f(w.seconds, 1)} s)`, f(w.efficiency, 3), ">= 0.97", mark(w.efficiency >= 0.97)])
    rows.push(["wholeAccount", "throttled answers", String(w.throttled), "0", mark(w.throttled === 0)])
    rows.push([
      "wholeAccount",
      `(${int(w.jobs)} jobs, ${int(w.rows)} rows of ${w.streams.length} streams, ${int(w.points)} pts, bucket ${int(w.maxPoints)} pts, restore ${int(w.restoreRate)} pts/s, unthrottled ${f(w.unthrottledSec, 1)} s)`,
      "",
      "",
      ""
    ])
    rows.push(["wholeAccount", "points per row", Object.entries(w.pointsPerRow).map(([s, n]) => `${s} ${f(n, 0)}`).join(", "), "", ""])
  }
  if (r.scale?.idleCycle) {
    const i = r.scale.idleCycle
    rows.push(["scale", `idle cycle, ${i.accounts} accounts: connector CPU ms per account`, f(i.connectorCpuMsPerAccount), `<= ${i.goal.connectorCpuMsPerAccount}`, mark(i.connectorCpuMsPerAccount <= i.goal.connectorCpuMsPerAccount)])
    rows.push(["scale", "idle cycle: SQL statements per account", f(i.statementsPerAccount, 1), `<= ${i.goal.statementsPerAccount}`, mark(i.statementsPerAccount <= i.goal.statementsPerAccount)])
    rows.push(["scale", "idle cycle: Postgres CPU ms, service requests per account", `${f(i.postgresCpuMsPerAccount)}, ${f(i.requestsPerAccount)}`, "", ""])
  }
  if (r.scale && hasRuns(r.scale)) {
    const sc = r.scale
    rows.push(["scale", "jobs claimed per second (nothing to do in them)", f(sc.claimsPerSecond, 0), ">= 300", mark(sc.claimsPerSecond >= 300)])
    rows.push(["scale", "due to start p50", `${f(sc.dueToStartP50Seconds)} s`, "", ""])
    rows.push(["scale", "due to start p99", `${f(sc.dueToStartP99Seconds)} s`, "<= 2 s", mark(sc.dueToStartP99Seconds <= 2)])
    rows.push(["scale", "failover (SIGKILL to running elsewhere)", `${f(sc.failoverSeconds, 1)} s`, "<= 60 s", mark(sc.failoverSeconds <= 60)])
    rows.push([
      "scale",
      `failover with the backfill cap full, ${sc.backfillsWaitingAtCapKill ?? "?"} waiting (SIGKILL to each account running again)`,
      `${f(sc.failoverSecondsUnderCap, 1)} s`,
      "<= 30 s",
      mark(sc.failoverSecondsUnderCap <= 30)
    ])
    rows.push(["scale", "hung worker (SIGSTOP to its accounts held by a live worker)", `${f(sc.hungWorkerReleaseSeconds, 1)} s`, "<= 60 s", mark(sc.hungWorkerReleaseSeconds <= 60)])
    rows.push(["scale", "overlapping runs of one account", String(sc.doubleRuns), "0", mark(sc.doubleRuns === 0)])
    for (const w of sc.workers) {
      rows.push([
        "scale",
        `${w.processes} worker(s): rows/s, ratio to ceiling (${w.bound}), x one worker, CPU s / peak MB per worker`,
        `${int(w.rowsPerSecond)}, ${f(w.ratioToCeiling, 3)}, ${f(w.ratioToOneWorker)}x, ${f(w.cpuSecondsPerWorker, 1)} / ${f(w.peakRssMbPerWorker, 0)}`,
        "",
        ""
      ])
    }
    const o = sc.oneWorker500
    if (o) {
      rows.push(["scale", `one worker, ${o.accounts} accounts at the real bucket: ratio to ceiling`, f(o.ratioToCeiling, 3), ">= 0.9", mark(o.ratioToCeiling >= 0.9)])
      rows.push(["scale", `one worker, ${o.accounts} accounts: peak RSS`, `${f(o.peakRssMb, 1)} MB`, "< 500 MB", mark(o.peakRssMb < 500)])
    }
    const k = sc.oneWorker1000
    if (k) {
      rows.push(["scale", `one worker, ${k.accounts} accounts in flight, buckets binding: ratio to ceiling`, f(k.ratioToCeiling, 3), ">= 0.9", mark(k.ratioToCeiling >= 0.9)])
      rows.push(["scale", `one worker, ${k.accounts} accounts in flight: peak RSS`, `${f(k.peakRssMb, 1)} MB`, "< 500 MB", mark(k.peakRssMb < 500)])
    }
  }
  return `${table(rows)}\n\nmachine: ${r.machine}\ntaken at ${r.takenAt} in ${f(r.totalSeconds, 0)} s`
}

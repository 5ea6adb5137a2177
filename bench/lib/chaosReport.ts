import { Effect } from "effect"
import type { Faults } from "../../src/emulator/EmulatorAdmin.js"
import type { Hang } from "./workerFaults.js"
import type { FencedWrites } from "./writeLog.js"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface ChaosReport {
  readonly seed: number
  readonly faults: Faults
  readonly faultsInjected: { readonly error: number; readonly drop: number; readonly truncate: number; readonly latency: number }
  readonly kills: number
  readonly terminations: number
  readonly terminatedBackends: number
  readonly attempts: ReadonlyArray<{ readonly pass: string; readonly outcome: string; readonly seconds: number }>
  readonly revoked: string | undefined
  readonly churned: number
  readonly refreshCommitFaults: number
  /** The account whose pages withhold nodes. */
  readonly withheldFrom: string | undefined
  /** SIGSTOPs of a worker: its accounts, and seconds until a live worker held them all (undefined: not within 60 s). */
  readonly hangs: ReadonlyArray<{ readonly pass: string } & Hang>
  /** The SIGKILL made with the backfill cap full: backfills running and waiting, the killed worker's accounts, seconds until each ran again. */
  readonly capKill: { readonly running: number; readonly waiting: number; readonly accounts: number; readonly runAgainSeconds: number | undefined } | undefined
  /** Postgres's write log: writes of the warehouse, checkpoints and runs, and those by a process not holding the account's lease. */
  readonly writeLog: FencedWrites
  readonly checks: ReadonlyArray<Check>
  readonly seconds: number
  readonly ok: boolean
}

export const say = (line: string) => Effect.sync(() => process.stderr.write(`chaos: ${line}\n`))
export const lastLines = (stderr: string) =>
  stderr
    .trim()
    .split("\n")
    .slice(-3)
    .map((l) => l.slice(0, 300))
    .join(" / ")

export const renderChaos = (r: ChaosReport): string =>
  [
    `seed ${r.seed}`,
    `faults requested: ${JSON.stringify(r.faults)}`,
    `faults injected: ${JSON.stringify(r.faultsInjected)}`,
    `connector SIGKILLs: ${r.kills}; pg_terminate_backend rounds: ${r.terminations} (${r.terminatedBackends} backends); revoked and reconnected: ${r.revoked ?? "none"}`,
    `records changed under the pager: ${r.churned}; refresh commits killed: ${r.refreshCommitFaults}`,
    `nodes withheld from the pages of: ${r.withheldFrom ?? "none"}`,
    `SIGSTOPs: ${r.hangs.map((h) => `${h.pass} ${h.accounts.length} account(s) taken in ${h.releaseSeconds?.toFixed(1) ?? "-"} s`).join(", ") || "none"}; ` +
      `SIGKILL with the backfill cap full: ${r.capKill === undefined ? "none" : `${r.capKill.running} running, ${r.capKill.waiting} waiting, ran again in ${r.capKill.runAgainSeconds?.toFixed(1) ?? "-"} s`}`,
    `write log: ${r.writeLog.writes} write statements, ${r.writeLog.takes} lease takes, ${r.writeLog.fenced} writes by a fenced worker, ${r.writeLog.unleased} unleased`,
    `attempts: ${r.attempts.length} (${r.attempts.map((a) => `${a.pass}: ${a.outcome}`).join(", ")})`,
    ...r.checks.map((c) => `${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`),
    `${r.ok ? "PASS" : "FAIL"} in ${r.seconds.toFixed(0)} s`
  ].join("\n")

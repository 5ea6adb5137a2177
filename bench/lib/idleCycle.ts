import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import * as os from "node:os"
import pg from "pg"
import type { EmulatorAdmin } from "../../src/emulator/EmulatorAdmin.js"
import { SyncRunner } from "../../src/run/SyncRunner.js"
import { renewStatement } from "../../src/sync/leaseStatements.js"
import { newAccount } from "./benchAccounts.js"
import { connectAccount, connectorLayer, settingsFor } from "./connector.js"
import { freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { processCpuSeconds } from "./machine.js"

/** The idle cycle's goal per account (issue 36): connector CPU ms and SQL statements. */
export const idleCycleGoal = { connectorCpuMsPerAccount: 10, statementsPerAccount: 15 } as const

export interface IdleCycleCounts {
  readonly accounts: number
  readonly statementsPerAccount: number
  /**
   * Of those, the reads of an account's token with its connection's status: one per account when its in-memory copy
   * (kept `recheckAfterMs`, 15 s) has lapsed since the account's last run, none within that window, so the count
   * depends on the wall clock between two runs.
   */
  readonly tokenReadsPerAccount: number
  /**
   * Of those, the renewals of the process's leases: one statement for all the accounts it holds every third of the
   * lease (10 s), so a share of an account that depends on the cycle's wall time, not on what a run does.
   */
  readonly leaseRenewalsPerAccount: number
  readonly requestsPerAccount: number
}

export interface IdleCycleResult extends IdleCycleCounts {
  readonly connectorCpuMsPerAccount: number
  readonly postgresCpuMsPerAccount: number
  readonly wallMs: number
  readonly loadAverage: number
}

let counting = 0
let statements = 0
let tokenReads = 0
let leaseRenewals = 0
/**
 * The token store's read of a token with its connection's status as a statement of its own (auth/TokenStore.ts
 * `readWithStatus`), not carried by the run's read of its decision inputs.
 */
const isTokenRead = (text: string) => /^\s*SELECT k\.account_id AS token_for/.test(text)
/** With IDLE_CYCLE_STATEMENTS set: how often each statement was sent while counting (written to that file). */
const statementTexts = new Map<string, number>()

// on the prototype, before any pool opens: each connection's prepared-statement wrapper (db/preparedStatements.ts)
// binds the `query` it finds when the connection opens
const query = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
;(pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, ...args: Array<unknown>) {
  if (counting > 0) {
    statements++
    const a = args[0] as string | { text?: string; name?: string }
    const raw = typeof a === "string" ? a : (a?.text ?? a?.name ?? "?")
    if (isTokenRead(raw)) tokenReads++
    else if (raw === renewStatement) leaseRenewals++
    // the statement's text normalized only when listed: the page statements are tens of kB, and this process's CPU is
    // the connector's figure
    if (process.env.IDLE_CYCLE_STATEMENTS) {
      const text = raw.replace(/\s+/g, " ").slice(0, 140)
      statementTexts.set(text, (statementTexts.get(text) ?? 0) + 1)
    }
  }
  return query.apply(this, args)
}

/**
 * Counts every statement this process's node-postgres clients send while `body` runs (each `client.query`, the pool's
 * included, is one round trip with one statement): the connector in this process, with nothing else querying.
 */
export const countingStatements = <A, E, R>(
  body: Effect.Effect<A, E, R>
): Effect.Effect<readonly [A, { readonly statements: number; readonly tokenReads: number; readonly leaseRenewals: number }], E, R> =>
  Effect.suspend(() => {
    const before = { statements, tokenReads, leaseRenewals }
    counting++
    return body.pipe(
      Effect.map(
        (a) =>
          [a, { statements: statements - before.statements, tokenReads: tokenReads - before.tokenReads, leaseRenewals: leaseRenewals - before.leaseRenewals }] as const
      ),
      Effect.ensuring(Effect.sync(() => void counting--))
    )
  })

/** `body` under this process's V8 CPU profiler, the profile written to `file` (for Chrome DevTools or speedscope). */
const cpuProfiled = <A, E, R>(file: string, body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const session = new Session()
      session.connect()
      await session.post("Profiler.enable")
      await session.post("Profiler.start")
      return session
    }),
    () => body,
    (session) =>
      Effect.promise(async () => {
        const { profile } = await session.post("Profiler.stop")
        fs.writeFileSync(file, JSON.stringify(profile))
        session.disconnect()
      })
  )

/** The backend pids of the sessions named `applicationName` (the connector's pool). */
const sessionPids = (applicationName: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.orDie(sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationName}`), (rows) => rows.map((r) => r.pid))
  )

/**
 * One `sync` run over `accountIds`, every stream current and nothing changed at the service: its connector CPU (this
 * process), the CPU of the connector's Postgres sessions (their /proc), its statements and service requests.
 */
export const measureIdleCycle = (options: {
  readonly accountIds: ReadonlyArray<string>
  readonly admin: EmulatorAdmin
  readonly applicationName: string
  readonly concurrency: number
  /** Write a V8 CPU profile of the cycle here. */
  readonly cpuProfile?: string
}) =>
  Effect.gen(function* () {
    const runner = yield* SyncRunner
    const pids0 = yield* sessionPids(options.applicationName)
    const pg0 = new Map(pids0.map((pid) => [pid, processCpuSeconds(pid)]))
    const stats0 = yield* options.admin.stats()
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const cycle = countingStatements(runner.run({ mode: "sync", accounts: options.accountIds, concurrency: options.concurrency }))
    const [reports, counted] = yield* (options.cpuProfile ? cpuProfiled(options.cpuProfile, cycle) : cycle)
    const wallMs = performance.now() - t0
    if (process.env.IDLE_CYCLE_STATEMENTS) {
      fs.writeFileSync(process.env.IDLE_CYCLE_STATEMENTS, [...statementTexts].sort((a, b) => b[1] - a[1]).map(([t, n]) => `${n}\t${t}`).join("\n"))
      statementTexts.clear()
    }
    const cpu = process.cpuUsage(cpu0)
    const stats1 = yield* options.admin.stats()
    const pids1 = yield* sessionPids(options.applicationName)
    let pgSeconds = 0
    for (const pid of new Set([...pids0, ...pids1])) pgSeconds += processCpuSeconds(pid) - (pg0.get(pid) ?? 0)
    const notSynced = reports.filter((r) => r.outcome !== "synced")
    if (notSynced.length > 0) return yield* new BenchError({ step: "idle cycle", reason: `${notSynced.length} account(s) not synced: ${notSynced[0]!.accountId} ${notSynced[0]!.outcome} ${notSynced[0]!.message ?? ""}` })
    const landed = reports.flatMap((r) => r.streams).filter((s) => s.counts.rowsWritten > 0 || s.kind === "full")
    if (landed.length > 0) return yield* new BenchError({ step: "idle cycle", reason: `not idle: ${landed[0]!.stream} made a ${landed[0]!.kind} pass writing ${landed[0]!.counts.rowsWritten} rows` })
    const n = options.accountIds.length
    const requests =
      stats1.graphqlRequests - stats0.graphqlRequests +
      (stats1.tokenRequests.refresh_token - stats0.tokenRequests.refresh_token) +
      (stats1.tokenRequests.authorization_code - stats0.tokenRequests.authorization_code)
    return {
      accounts: n,
      connectorCpuMsPerAccount: (cpu.user + cpu.system) / 1000 / n,
      postgresCpuMsPerAccount: (pgSeconds * 1000) / n,
      statementsPerAccount: counted.statements / n,
      tokenReadsPerAccount: counted.tokenReads / n,
      leaseRenewalsPerAccount: counted.leaseRenewals / n,
      requestsPerAccount: requests / n,
      wallMs,
      loadAverage: os.loadavg()[0]!
    } satisfies IdleCycleResult
  })

export interface IdleCycleOptions {
  readonly accounts: number
  /** Jobs of each account (the other collections scale with them). */
  readonly jobs: number
  readonly concurrency: number
  /** Idle cycles measured one after another (the figures are their median by connector CPU). */
  readonly cycles: number
}

const say = (line: string) => Effect.sync(() => process.stderr.write(`bench: scale: idle cycle: ${line}\n`))

/**
 * `accounts` small accounts, every stream, connected and brought current by one `sync`; then `cycles` `sync` runs with
 * nothing changed at the service, each measured (measureIdleCycle).
 */
export const idleCycleBench = (emulator: EmulatorProcess, o: IdleCycleOptions) =>
  Effect.gen(function* () {
    const applicationName = `account-sync-idle-${process.pid}`
    const ids = yield* Effect.forEach(Array.from({ length: o.accounts }), () => newAccount(emulator, o.jobs, { maxPoints: 10_000, restoreRate: 10_000 }), { concurrency: 8 })
    return yield* Effect.gen(function* () {
      const t0 = performance.now()
      yield* Effect.forEach(ids, connectAccount, { concurrency: 8, discard: true })
      yield* say(`${ids.length} accounts of ${o.jobs} jobs connected in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      const t1 = performance.now()
      const first = yield* (yield* SyncRunner).run({ mode: "sync", accounts: ids, concurrency: o.concurrency })
      const failed = first.filter((r) => r.outcome !== "synced")
      if (failed.length > 0) return yield* new BenchError({ step: "idle cycle", reason: `first sync: ${failed.length} account(s) not synced: ${failed[0]!.message ?? failed[0]!.outcome}` })
      yield* say(`first sync (full passes) in ${((performance.now() - t1) / 1000).toFixed(1)} s`)
      const cycles: Array<IdleCycleResult> = []
      for (let i = 0; i < o.cycles; i++) {
        const cpuProfile = i === o.cycles - 1 ? process.env.IDLE_CYCLE_CPU_PROFILE : undefined
        const r = yield* measureIdleCycle({ accountIds: ids, admin: emulator.admin, applicationName, concurrency: o.concurrency, ...(cpuProfile ? { cpuProfile } : {}) })
        yield* say(
          `${r.accounts} accounts in ${(r.wallMs / 1000).toFixed(1)} s: connector ${r.connectorCpuMsPerAccount.toFixed(2)} CPU ms, Postgres ${r.postgresCpuMsPerAccount.toFixed(2)} CPU ms, ` +
            `${r.statementsPerAccount.toFixed(1)} statements (${r.tokenReadsPerAccount.toFixed(1)} token reads), ${r.requestsPerAccount.toFixed(2)} requests per account; load ${r.loadAverage.toFixed(2)}`
        )
        cycles.push(r)
      }
      const sorted = [...cycles].sort((a, b) => a.connectorCpuMsPerAccount - b.connectorCpuMsPerAccount)
      return { ...sorted[Math.floor(sorted.length / 2)]!, cycles: cycles.length, jobsPerAccount: o.jobs, goal: idleCycleGoal }
    }).pipe(
      Effect.scoped,
      Effect.provide(
        connectorLayer({
          settings: { ...settingsFor(emulator), SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "", SYNC_FULL_PASS_EVERY: "7 days" },
          schema: freshSchemaName("idle"),
          concurrency: o.concurrency,
          applicationName
        })
      ),
      Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "idle cycle", reason: String((e as { message?: string })?.message ?? e) })))
    )
  })

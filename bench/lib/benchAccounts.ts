import { Effect, type Layer } from "effect"
import * as crypto from "node:crypto"
import { estimateQueryCost } from "../../src/api/costEstimate.js"
import type { CostBudget } from "../../src/api/CostBudget.js"
import type { Limits } from "../../src/emulator/EmulatorAdmin.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"
import { SyncRunner } from "../../src/run/SyncRunner.js"
import { connectAccount, connectorLayer, type Env, settingsFor } from "./connector.js"
import { freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { postgresCpu, postgresCpuSince } from "./machine.js"

export const jobsStream = jobScalarsStream

/** Cost the service requests for one full page of the jobs stream (`first: 100`), computed as the service does. */
export const fullPageCost = (first = jobsStream.maxPageSize) =>
  estimateQueryCost(jobsStream.document, { ...jobsStream.fullPass, first, after: null })

/** Limits no benchmark can reach: the emulator never throttles and never rate-limits. */
export const unlimited: Limits = { maxPoints: 1e12, restoreRate: 1e12, requestLimit: 1e9 }

const JOB_SEED = 4242

/**
 * SyncRunner's advisory lock is keyed by account id alone (database-wide, whatever the schema), and every emulator
 * numbers its accounts from 1001: random ids keep a benchmark from being "skipped" because a test elsewhere on the
 * same Postgres holds the lock of its own account 1001.
 */
export const uniqueAccountId = () => Buffer.from(`gid://service/Account/${crypto.randomInt(1_000_000, 2 ** 47)}`).toString("base64")

/** A new account of the emulator child (its own bucket), `jobs` deterministic jobs, and its limits. */
export const newAccount = (emulator: EmulatorProcess, jobs: number, limits: Limits) =>
  Effect.gen(function* () {
    const account = yield* emulator.admin.createAccount({ accountId: uniqueAccountId(), jobs, seed: JOB_SEED })
    yield* emulator.admin.setLimits({ ...limits, clientId: emulator.clientId, accountId: account.accountId })
    return account.accountId
  })

export interface TimedRun {
  readonly wallMs: number
  readonly cpuMs: number
  readonly rows: number
  /** CPU seconds of every Postgres process over the run (its backends, writers and checkpointer). */
  readonly postgresCpuSec: number
}

/** Connects every account through the real OAuth flow, then one timed `backfill` of them all. */
export const connectAndBackfill = (accountIds: ReadonlyArray<string>, concurrency: number, beforeRun: Effect.Effect<void, unknown> = Effect.void) =>
  Effect.gen(function* () {
    yield* Effect.forEach(accountIds, connectAccount, { concurrency: 8, discard: true })
    yield* beforeRun
    const runner = yield* SyncRunner
    const postgres0 = postgresCpu()
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const reports = yield* runner.run({ mode: "backfill", accounts: accountIds, concurrency })
    const wallMs = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const postgresCpuSec = postgresCpuSince(postgres0)
    const bad = reports.filter((r) => r.outcome !== "synced")
    if (bad.length > 0) {
      return yield* new BenchError({ step: "backfill", reason: `${bad.length} account(s) not synced, e.g. ${bad[0]!.accountId}: ${bad[0]!.outcome} ${bad[0]!.message ?? ""}` })
    }
    const rows = reports.reduce((n, r) => n + r.streams.reduce((m, s) => m + s.counts.rows, 0), 0)
    return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, rows, postgresCpuSec } satisfies TimedRun
  })

export const inConnector = <A, E>(
  emulator: EmulatorProcess,
  options: { readonly budget?: Layer.Layer<CostBudget>; readonly concurrency?: number; readonly settings?: Env },
  body: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof connectorLayer>>>
) => {
  const schema = freshSchemaName("bench")
  const { settings, ...rest } = options
  return body.pipe(
    Effect.scoped,
    Effect.provide(connectorLayer({ settings: { ...settingsFor(emulator), ...settings }, schema, ...rest })),
    Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "connector", reason: String((e as { message?: string })?.message ?? e) })))
  )
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Landing: unthrottled backfill rows/s vs COPY of the same rows into an identical table

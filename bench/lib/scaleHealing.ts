import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { JobQueue } from "../../src/jobs/JobQueue.js"
import type { Env } from "./connector.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { overlappingRuns, queueOf, startWorker, waitFor, withAccounts } from "./scaleWorkers.js"
import { accountsLeasedTo, backfillsUnderCap, databaseNow, hangUntilTaken, runAgainSeconds, whyNotRunAgain, withWorkLeft } from "./workerFaults.js"

/** A fleet that heals: a worker SIGKILLed with the backfill cap full, a worker hung (SIGSTOP). Workers are separate processes. */
export interface HealingOptions {
  /** Accounts and their jobs of the cap run (each backfilled), the cap (QUEUE_BACKFILLS_AT_ONCE) and two workers of `cap` slots. */
  readonly capAccounts: number
  readonly capJobs: number
  readonly cap: number
  /** Accounts and jobs of the hung-worker run. */
  readonly hungAccounts: number
  readonly hungJobs: number
  /** Every answer of the service this late: backfills of tens of seconds, killed mid-page. */
  readonly latencyMs: number
}


export interface HealingResult {
  /** SIGKILL of the worker holding the cap's backfills, others waiting: seconds until the last of its accounts ran again. */
  readonly failoverSecondsUnderCap: number
  /** Backfills waiting their turn under the cap when that worker was killed: the contention the figure was made under. */
  readonly backfillsWaitingAtCapKill: number
  /** SIGSTOP of a worker holding accounts: seconds until a live worker had taken the last of their leases (at their default). */
  readonly hungWorkerReleaseSeconds: number
  readonly doubleRuns: number
}

const say = (line: string) => Effect.sync(() => process.stderr.write(`bench: scale: ${line}\n`))

/** The settings that matter at their defaults (retry delay, lease, heartbeat); the cap as given. */
const healingEnv = (env: Env, cap: number): Env => ({ ...env, QUEUE_BACKFILLS_AT_ONCE: String(cap), QUEUE_RETRY_DELAY_SECONDS: "5", QUEUE_RETRY_DELAY_MAX_SECONDS: "600" })

const enqueueBackfills = (env: Env, ids: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.flatMap(JobQueue, (queue) =>
      Effect.flatMap(Effect.sync(() => new Date().toISOString()), (at) =>
        Effect.forEach(ids, (accountId) => queue.enqueue({ kind: "backfill", accountId, dueAt: at, requestedAt: at, restart: false }), { discard: true })
      )
    ).pipe(Effect.provide(queueOf(env)))
  )

/** Accounts with at least `rows` jobs landed. */
const landing = (rows: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT account_id FROM jobs GROUP BY account_id HAVING count(*) >= ${rows}) a`), (r) => r[0]?.n ?? 0)
  )

const withLatency = <A, E, R>(emulator: EmulatorProcess, latencyMs: number, body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(emulator.admin.setFaults({ latencyRate: 1, latencyMs, seed: 3 }), () => body, () => Effect.ignore(emulator.admin.setFaults({})))

/** Backfills enqueued, the first worker fills the cap; the second starts idle; the first is SIGKILLed mid-page. */
const failoverUnderCapRun = (emulator: EmulatorProcess, o: HealingOptions) =>
  // buckets of 10,000 points at 2,000/s: a backfill of minutes, so the first ones are still running, and the others
  // waiting, when the kill comes (at 100,000/s an account of 1,500 jobs was backfilled in seconds)
  withAccounts(emulator, { accounts: o.capAccounts, jobs: o.capJobs, limits: { maxPoints: 10_000, restoreRate: 2_000 }, poolSize: 10 }, (base, ids) =>
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const env = healingEnv(base, o.cap)
        yield* enqueueBackfills(env, ids)
        const queueSchema = `${env.DB_SCHEMA}_queue`
        const first = yield* startWorker(env, o.cap)
        // the cap full, the other backfills waiting their turn, and pages landed: what a kill under contention needs.
        // Waiting for 150 jobs an account let the first backfills end (a whole-account backfill pages every stream
        // at once, small ones end in seconds) and the next ones take the cap: none waited when the kill came
        yield* waitFor(
          `${o.cap} backfills landing pages on the first worker, ${o.capAccounts - o.cap} waiting`,
          180,
          Effect.map(Effect.zip(backfillsUnderCap(queueSchema), landing(1)), ([c, underWay]) => c.running >= o.cap && c.waiting > 0 && underWay >= o.cap)
        )
        const second = yield* startWorker(env, o.cap)
        yield* Effect.sleep("5 seconds")
        const held = yield* accountsLeasedTo(first.pid)
        if (held.length === 0) {
          const why = yield* whyNotRunAgain(queueSchema, ids, yield* databaseNow)
          return yield* new BenchError({ step: "scale", reason: `the first worker held no account when it was to be SIGKILLed: ${why}; its last lines: ${first.tail()}` })
        }
        const { waiting } = yield* backfillsUnderCap(queueSchema)
        const killedAt = yield* databaseNow
        yield* first.kill("SIGKILL")
        // an account whose backfill ended as the kill came has nothing to run again
        const unfinished = yield* withWorkLeft(queueSchema, held)
        if (unfinished.length === 0) {
          const why = yield* whyNotRunAgain(queueSchema, held, killedAt)
          return yield* new BenchError({ step: "scale", reason: `every account the first worker held had finished when it was SIGKILLed, nothing to fail over: ${why}` })
        }
        const seconds = yield* runAgainSeconds(unfinished, killedAt, 300)
        if (seconds === undefined) {
          const why = yield* whyNotRunAgain(queueSchema, unfinished, killedAt)
          return yield* new BenchError({ step: "scale", reason: `the SIGKILLed worker's ${unfinished.length} unfinished accounts did not run again within 300 s: ${why}; the live worker's last lines: ${second.tail()}` })
        }
        const double = yield* overlappingRuns(sql)
        yield* second.kill("SIGTERM")
        yield* say(`failover under the cap: ${unfinished.length} unfinished account(s) of the worker SIGKILLed with the cap (${o.cap}) full and ${waiting} backfill(s) waiting ran again after ${seconds.toFixed(1)} s (the slowest)`)
        return { seconds, double, waiting }
      })
    )
  )

/** Backfills on the first worker, a second idle beside it; the first SIGSTOPped until the second holds its accounts. */
const hungWorkerRun = (emulator: EmulatorProcess, o: HealingOptions) =>
  withAccounts(emulator, { accounts: o.hungAccounts, jobs: o.hungJobs, limits: { maxPoints: 100_000, restoreRate: 100_000 }, poolSize: 10 }, (base, ids) =>
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const env = healingEnv(base, 1000)
        yield* enqueueBackfills(env, ids)
        const hung = yield* startWorker(env, o.hungAccounts)
        yield* waitFor("the backfills landing pages on the first worker", 180, Effect.map(landing(Math.ceil(o.hungJobs / 10)), (n) => n >= o.hungAccounts))
        const live = yield* startWorker(env, o.hungAccounts)
        yield* Effect.sleep("3 seconds")
        const hang = yield* hangUntilTaken(hung.pid, 180)
        if (hang.accounts.length === 0 || hang.releaseSeconds === undefined) {
          return yield* new BenchError({ step: "scale", reason: `the SIGSTOPped worker held ${hang.accounts.length} account(s); not taken within 180 s` })
        }
        const double = yield* overlappingRuns(sql)
        yield* hung.kill("SIGKILL")
        yield* live.kill("SIGTERM")
        yield* say(`hung worker: ${hang.accounts.length} account(s) of the SIGSTOPped worker taken by the live one after ${hang.releaseSeconds.toFixed(1)} s`)
        return { seconds: hang.releaseSeconds, double }
      })
    )
  )

export const healingRuns = (emulator: EmulatorProcess, o: HealingOptions) =>
  withLatency(
    emulator,
    o.latencyMs,
    Effect.gen(function* () {
      const cap = yield* failoverUnderCapRun(emulator, o)
      const hung = yield* hungWorkerRun(emulator, o)
      return {
        failoverSecondsUnderCap: cap.seconds,
        backfillsWaitingAtCapKill: cap.waiting,
        hungWorkerReleaseSeconds: hung.seconds,
        doubleRuns: cap.double + hung.double
      } satisfies HealingResult
    })
  )

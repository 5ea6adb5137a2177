import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { JobQueue, JobQueueLive } from "../../src/jobs/JobQueue.js"
import { JobSettings } from "../../src/jobs/JobSettings.js"
import { spawnCli } from "./cli.js"
import { connectAccount, TestSettings } from "./connector.js"
import { TestEmulator } from "./emulator.js"
import { type Env, withEnv } from "./config.js"

/** Settings that keep the queue's timings test-sized: failover within ~25 s, no cron line firing during a test. */
export const queueTestEnv: Env = {
  QUEUE_HEARTBEAT_SECONDS: "10",
  QUEUE_MONITOR_SECONDS: "2",
  QUEUE_POLL_INTERVAL: "200 millis",
  QUEUE_RETRY_DELAY_SECONDS: "1",
  QUEUE_RETRY_DELAY_MAX_SECONDS: "2",
  // 1 January only: the tests tick the schedule themselves (a worker also ticks once when it starts)
  QUEUE_SCHEDULE: "0 0 1 1 *",
  LOG_LEVEL: "info"
}

/** A `worker` process (separate, as in production) with `env`; killed with the scope. */
export const spawnWorker = (env: Env, concurrency = 4) => spawnCli(["worker", "--concurrency", String(concurrency)], env)

/** The job queue in this (the test's) process, configured by `env`: to enqueue as serve or the schedule would. */
export const queueIn = (env: Env) =>
  JobQueueLive({ supervise: false, instanceName: "test" }).pipe(Layer.provide(JobSettings.layer), Layer.provide(withEnv(env)))

export const withQueue = <A, E, R>(env: Env, f: (queue: typeof JobQueue.Service) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(JobQueue, f).pipe(Effect.provide(queueIn(env))))

const RunRow = Schema.Struct({
  id: Schema.Number,
  account_id: Schema.String,
  kind: Schema.String,
  outcome: Schema.String,
  started_at: Schema.DateFromSelf,
  finished_at: Schema.NullOr(Schema.DateFromSelf)
})

/** Every sync run recorded, oldest first. */
export const syncRuns = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT id::int AS id, account_id, kind, outcome, started_at, finished_at FROM sync_runs ORDER BY id`
  return yield* Schema.decodeUnknown(Schema.Array(RunRow))(rows)
}).pipe(Effect.orDie)

/** No account has two runs whose intervals overlap (a running one reaches to now). */
export const expectNoOverlappingRuns = (runs: ReadonlyArray<typeof RunRow.Type>) => {
  const byAccount = new Map<string, Array<typeof RunRow.Type>>()
  for (const r of runs) byAccount.set(r.account_id, [...(byAccount.get(r.account_id) ?? []), r])
  const overlaps: Array<string> = []
  for (const [account, list] of byAccount) {
    const sorted = [...list].sort((a, b) => a.started_at.getTime() - b.started_at.getTime())
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted[i - 1]!
      const end = before.finished_at?.getTime() ?? Number.POSITIVE_INFINITY
      if (sorted[i]!.started_at.getTime() < end) overlaps.push(`${account}: run ${before.id} and run ${sorted[i]!.id}`)
    }
  }
  expect(overlaps).toEqual([])
}

/** Polls `check` every 200 ms until it holds, for at most `seconds`; the seconds it took. */
export const waitUntil = (what: string, seconds: number, check: Effect.Effect<boolean, never, SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const started = Date.now()
    while (!(yield* check)) {
      if (Date.now() - started > seconds * 1000) return yield* Effect.dieMessage(`not within ${seconds} s: ${what}`)
      yield* Effect.sleep("200 millis")
    }
    return (Date.now() - started) / 1000
  })

/** A backfill job for each account, as connecting enqueues it (before any worker runs, in the tests). */
export const enqueueBackfills = (env: Env, accountIds: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.sync(() => new Date().toISOString()), (now) =>
    withQueue(env, (queue) => Effect.forEach(accountIds, (accountId) => queue.enqueue({ kind: "backfill", accountId, dueAt: now, requestedAt: now, restart: false })))
  )

/**
 * The emulator's first account connected, every answer of the service `latencyMs` late until the scope closes, and
 * its backfill enqueued as connecting enqueues it, before any worker runs.
 */
export const backfillEnqueuedAtLatency = (latencyMs: number, seed: number) =>
  Effect.gen(function* () {
    const { accounts, admin } = yield* TestEmulator
    const accountId = accounts[0]!.accountId
    yield* connectAccount(accountId)
    const env = yield* TestSettings
    yield* admin.setFaults({ latencyRate: 1, latencyMs, seed })
    yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
    yield* enqueueBackfills(env, [accountId])
    return { accountId, env, admin }
  })

/** Rows of `jobs` landed, per account. */
export const jobsLanded = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ account_id: string; n: number }>`SELECT account_id, count(*)::int AS n FROM jobs GROUP BY account_id`
).pipe(Effect.orDie)

/** How many accounts have a succeeded full pass. */
export const accountsFullySynced = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(DISTINCT account_id)::int AS n FROM sync_runs WHERE kind = 'full' AND outcome = 'succeeded'`, (r) => r[0]!.n)
).pipe(Effect.orDie)

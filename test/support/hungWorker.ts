import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import type { ChildProcess } from "node:child_process"
import { connectAccount, TestSettings } from "./connector.js"
import { TestDatabase } from "./database.js"
import { TestEmulator } from "./emulator.js"
import { jobScalarsStream } from "./jobsOnly.js"
import { expectStreamExact } from "./streamExactness.js"
import { syncHarness } from "./syncHarness.js"
import { accountsFullySynced, enqueueBackfills, expectNoOverlappingRuns, jobsLanded, queueTestEnv, spawnWorker, syncRuns, waitUntil } from "./workers.js"

export const jobsPerAccount = 3000

/**
 * A write log kept by Postgres itself: every row written to the warehouse's jobs, the checkpoints, the seen ids and
 * sync_runs, with the writing session's application_name (a worker's sessions carry its host:pid), the time and the
 * account.
 */
export const writeLog = (schema: string) => `
  CREATE TABLE write_log (n bigserial PRIMARY KEY, writer text NOT NULL, tbl text NOT NULL, at timestamptz NOT NULL, account_id text);
  CREATE FUNCTION log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO ${schema}.write_log (writer, tbl, at, account_id)
    VALUES (current_setting('application_name'), TG_TABLE_NAME, clock_timestamp(), CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END);
    RETURN NULL; END $$;
  ${["jobs", "sync_checkpoints", "sync_pass_seen", "sync_runs"]
    .map((t) => `CREATE TRIGGER log_write AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION log_write();`)
    .join("\n")}`

// leases of 6 s (renewed every 2 s) so the test need not wait 30 s; the queue's heartbeat at pg-boss's floor (10 s)
export const env = { ...queueTestEnv, ACCOUNT_LEASE_SECONDS: "6" }

/**
 * The harness's 2 accounts connected, Postgres's write log in place, every answer 300 ms late (`seed`), both backfills
 * enqueued and landing pages on a first worker (`firstEnv`), then a second worker live beside it.
 */
export const twoWorkersBackfilling = (firstEnv: Record<string, string>, seed: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { schema } = yield* TestDatabase
    const { accounts, admin } = yield* TestEmulator
    const settings = yield* TestSettings
    for (const a of accounts) yield* connectAccount(a.accountId)
    yield* sql.unsafe(writeLog(schema))
    yield* admin.setFaults({ latencyRate: 1, latencyMs: 300, seed })
    yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
    yield* enqueueBackfills(settings, accounts.map((a) => a.accountId))
    const first = yield* spawnWorker(firstEnv, 2)
    yield* waitUntil("both backfills landing pages on the first worker", 120, Effect.map(jobsLanded, (rows) => rows.filter((r) => r.n >= 300).length === 2))
    const second = yield* spawnWorker(settings, 2)
    return { first, second }
  })

/** Every account exact, no two runs of an account at once and none left running. */
export const expectExactAndRunsClosed = Effect.gen(function* () {
  const { accounts } = yield* TestEmulator
  for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(jobsPerAccount)
  const runs = yield* syncRuns
  // a skipped row is a refused attempt (the lease still held elsewhere), not a run
  expectNoOverlappingRuns(runs.filter((r) => r.outcome !== "running" && r.outcome !== "skipped"))
  expect(runs.filter((r) => r.outcome === "running")).toEqual([])
})

/** How the first worker stops answering, and comes back. */
export interface Fault {
  readonly name: string
  /** The first worker's settings (its DATABASE_URL through a proxy the fault stalls), and what stops and resumes it. */
  readonly setUp: (settings: Record<string, string>) => Effect.Effect<{
    readonly env: Record<string, string>
    readonly stop: (worker: ChildProcess) => Effect.Effect<void>
    readonly resume: (worker: ChildProcess) => Effect.Effect<void>
  }, never, Scope.Scope>
}

/**
 * The scenario of a worker that stops answering while it backfills both accounts (`fault`), a second worker live:
 * its accounts move within 60 s and, once back, it writes nothing for them. One test file a fault, so they run side by side.
 */
export const aWorkerThatStopsAnswering = (fault: Fault) => {
  // 2 accounts of 3,000 jobs, every answer 300 ms late: backfills of tens of seconds
  layer(syncHarness({ accounts: 2, jobs: jobsPerAccount, limits: { maxPoints: 100_000, restoreRate: 100_000 } }, { env }), {
    timeout: 300_000,
    excludeTestServices: true
  })(`a worker that stops answering: ${fault.name}`, (it) => {
    it.scoped(
      "its accounts move to the live worker within 60 s; when it comes back it writes nothing for them (Postgres's own write log); exact",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { admin } = yield* TestEmulator
          const faulty = yield* fault.setUp(yield* TestSettings)
          const { first: hung, second: live } = yield* twoWorkersBackfilling(faulty.env, 5)
          yield* Effect.sleep("3 seconds")
          const hungWriter = `% worker %:${hung.child.pid}`
          const liveHolder = `% worker %:${live.child.pid} %`

          yield* faulty.stop(hung.child)
          const [{ stoppedAt }] = (yield* sql<{ stoppedAt: Date }>`SELECT now() AS "stoppedAt"`) as unknown as [{ stoppedAt: Date }]
          const moved = Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM account_leases WHERE holder LIKE ${liveHolder} AND expires_at > now()`)
          const seconds = yield* waitUntil("both accounts' leases held by the live worker", 90, Effect.map(moved, (r) => r[0]!.n === 2))
          expect(seconds).toBeLessThanOrEqual(60)
          const [{ movedAt }] = (yield* sql<{ movedAt: Date }>`
            SELECT max(acquired_at) AS "movedAt" FROM account_leases WHERE holder LIKE ${liveHolder}`) as unknown as [{ movedAt: Date }]
          yield* Effect.sync(() => console.info(`${fault.name}: the accounts moved ${seconds.toFixed(1)} s after the fault`))
          // the live worker lands pages for them, then the first one comes back with what it had in flight
          yield* Effect.sleep("3 seconds")
          yield* faulty.resume(hung.child)
          const [{ resumedAt }] = (yield* sql<{ resumedAt: Date }>`SELECT now() AS "resumedAt"`) as unknown as [{ resumedAt: Date }]
          // the first worker back with what it had in flight: the rest of the backfills need not answer late to end exact
          yield* admin.setFaults({})

          yield* waitUntil(
            "both backfills done on the live worker",
            180,
            Effect.map(accountsFullySynced, (n) => n === 2)
          )
          // time for the first worker to try what it had in hand (its heartbeat tells it within 5 s that the jobs are gone)
          yield* Effect.sleep("8 seconds")
          const writesOf = (after: Date) =>
            Effect.orDie(sql<{ tbl: string; n: number }>`
              SELECT tbl, count(*)::int AS n FROM write_log WHERE writer LIKE ${hungWriter} AND at > ${after}::timestamptz GROUP BY tbl ORDER BY tbl`)
          expect((yield* Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM write_log WHERE writer LIKE ${hungWriter}`))[0]!.n).toBeGreaterThan(0)
          expect(yield* writesOf(movedAt)).toEqual([])
          expect(yield* writesOf(resumedAt)).toEqual([])
          expect(stoppedAt.getTime()).toBeLessThan(movedAt.getTime())
          yield* expectExactAndRunsClosed
          expect(hung.child.exitCode).toBeNull()
          expect(live.child.exitCode).toBeNull()
        }),
      300_000
    )
  })
}

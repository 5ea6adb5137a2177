import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer, Option, Schedule } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { ExitCodes } from "../../../src/cli/ExitCode.js"
import { runExit } from "../../../src/cli/summary.js"
import { AccountLeases, AccountLeasesLive } from "../../../src/sync/AccountLeases.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { embeddedTestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

layer(syncHarness({ accounts: 2, jobs: 1000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }, { env: { SYNC_FULL_PASS_EVERY: "1 hour" } }), {
  timeout: 60_000,
  excludeTestServices: true
})("SyncRunner", (it) => {
  const connected = Effect.gen(function* () {
    const { accounts } = yield* TestEmulator
    const active = (yield* (yield* Connections).list()).filter((c) => c.status === "active")
    for (const a of accounts) if (!active.some((c) => c.accountId === a.accountId)) yield* connectAccount(a.accountId)
    return accounts.map((a) => a.accountId) as [string, string]
  })

  it.effect("sync: a full pass first, then incremental passes until the full-pass cadence is due", () =>
    Effect.gen(function* () {
      const [a] = yield* connected
      const runner = yield* SyncRunner
      const first = yield* runner.run({ mode: "sync", accounts: [a] })
      expect(first.map((r) => [r.accountId, r.outcome, r.streams[0]!.kind])).toEqual([[a, "synced", "full"]])
      const second = yield* runner.run({ mode: "sync", accounts: [a] })
      expect(second[0]!.streams[0]!.kind).toBe("incremental")
      // nothing changed: the pass stops after the first page, writes nothing
      expect(second[0]!.streams[0]!.counts.rowsWritten).toBe(0)
      expect(second[0]!.streams[0]!.counts.pages).toBeLessThanOrEqual(2)
      const sql = yield* SqlClient.SqlClient
      // rows changed: the run's row, written with the batch that ends the pass, holds what the run reports
      const { admin } = yield* TestEmulator
      const service = yield* admin.listRecords({ accountId: a, collection: "jobs" })
      yield* admin.advanceClock({ seconds: 600 })
      yield* admin.editRecords({ accountId: a, collection: "jobs", ids: service.slice(0, 3).map((r) => r.id), seed: 7 })
      const edited = (yield* runner.run({ mode: "sync", accounts: [a] }))[0]!.streams[0]!
      expect([edited.kind, edited.outcome, edited.counts.rowsWritten]).toEqual(["incremental", "succeeded", 3])
      const [row] = yield* sql<{ outcome: string; pages: number; rows: number; rows_written: number; finished: boolean }>`
        SELECT outcome, pages, rows, rows_written, finished_at IS NOT NULL AS finished FROM sync_runs WHERE account_id = ${a} ORDER BY id DESC LIMIT 1`
      expect(row).toEqual({ outcome: "succeeded", pages: edited.counts.pages, rows: edited.counts.rows, rows_written: 3, finished: true })
      // the last full pass is now older than the cadence (1 hour)
      yield* sql`UPDATE sync_checkpoints SET last_full_pass_at = now() - interval '2 hours' WHERE account_id = ${a}`
      const third = yield* runner.run({ mode: "sync", accounts: [a] })
      expect(third[0]!.streams[0]!.kind).toBe("full")
      expect(yield* expectStreamExact(jobScalarsStream, a)).toBe(1000)
    })
  )

  // another process: a lease layer of its own (its own session), as a worker or a second `sync` has
  it.effect.skipIf(embeddedTestDatabase())("an account held by another process is skipped and said so, naming the holder; the others run", () =>
    Effect.gen(function* () {
      const [a, b] = yield* connected
      const sql = yield* SqlClient.SqlClient
      const reports = yield* Effect.scoped(
        Effect.gen(function* () {
          expect(yield* (yield* AccountLeases).acquire(b)).toEqual(Option.none())
          return yield* (yield* SyncRunner).run({ mode: "backfill" })
        })
      ).pipe(Effect.provide(Layer.fresh(AccountLeasesLive)))
      expect(reports.map((r) => [r.accountId, r.outcome])).toEqual([[a, "synced"], [b, "skipped"]])
      expect(reports[1]!.message).toMatch(/^another account-sync process is syncing this account \(held by .* \(pid \d+\)\)$/)
      const runs = yield* sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE account_id = ${b}`
      expect(runs.map((r) => r.outcome)).toEqual(["skipped"])
      // skipped is not a failure: only the app role can hold a lease (a reader cannot make an account skip)
      expect(runExit(reports)).toEqual({ code: ExitCodes.ok, message: expect.stringContaining("skipped: ") })
    })
  )

  it.effect("two runs of one account in one process: the second is refused while the first runs, and leaves its runs alone", () =>
    Effect.gen(function* () {
      const [a] = yield* connected
      const sql = yield* SqlClient.SqlClient
      const runner = yield* SyncRunner
      const before = (yield* sql<{ n: number }>`SELECT coalesce(max(id), 0)::int AS n FROM sync_runs`)[0]!.n
      // the first run is under way once its run's row is written
      const first = yield* Effect.fork(runner.run({ mode: "backfill", accounts: [a], restart: true }))
      const started = yield* Deferred.make<void>()
      yield* Effect.repeat(
        Effect.flatMap(sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_runs WHERE id > ${before} AND outcome = 'running'`, (r) =>
          r[0]!.n > 0 ? Deferred.succeed(started, undefined) : Effect.succeed(false)
        ),
        { until: (done) => done === true, schedule: Schedule.spaced("20 millis") }
      )
      yield* Deferred.await(started)
      const second = yield* runner.run({ mode: "backfill", accounts: [a], restart: true })
      expect(second.map((r) => [r.outcome, r.message])).toEqual([["skipped", expect.stringMatching(/^another run of this process is syncing this account/)]])
      const reports = yield* Fiber.join(first)
      expect(reports.map((r) => r.outcome)).toEqual(["synced"])
      const runs = yield* sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE id > ${before} AND account_id = ${a} ORDER BY id`
      expect(runs.map((r) => r.outcome)).toEqual(["succeeded", "skipped"])
    })
  )

  it.effect("--account for an account that is not connected is reported, with the exit code that says what to do", () =>
    Effect.gen(function* () {
      const [a] = yield* connected
      const connections = yield* Connections
      const unknown = yield* (yield* SyncRunner).run({ mode: "sync", accounts: ["no-such-account"] })
      expect(unknown.map((r) => r.outcome)).toEqual(["failed"])
      expect(runExit(unknown).code).toBe(ExitCodes.failure)
      yield* connections.markRevoked(a, "test")
      const revoked = yield* (yield* SyncRunner).run({ mode: "sync", accounts: [a] })
      expect(revoked.map((r) => [r.outcome, r.message])).toEqual([
        ["needs-reconnect", "connection revoked (test); not synced until it is reconnected (account-sync connect)"]
      ])
      expect(runExit(revoked).code).toBe(ExitCodes.needsReconnect)
      yield* connectAccount(a)
    })
  )

  it.effect("a revoked connection is reported by every later run (exit 3) until reconnected; a disconnected one is not", () =>
    Effect.gen(function* () {
      const [a, b] = yield* connected
      const connections = yield* Connections
      const runner = yield* SyncRunner
      yield* connections.markRevoked(a, "refresh token refused (invalid_grant)")
      for (const mode of ["sync", "backfill"] as const) {
        const reports = yield* runner.run({ mode })
        expect(reports.map((r) => [r.accountId, r.outcome])).toEqual([[a, "needs-reconnect"], [b, "synced"]])
        expect(reports[0]!.streams).toEqual([])
        expect(reports[0]!.message).toContain("revoked (refresh token refused (invalid_grant))")
        expect(reports[0]!.message).toContain("reconnect")
        const exit = runExit(reports)
        expect(exit.code).toBe(ExitCodes.needsReconnect)
        expect(exit.message).toContain(a)
      }
      // --account filters apply: a run for the other account neither syncs nor reports it
      const other = yield* runner.run({ mode: "sync", accounts: [b] })
      expect(other.map((r) => [r.accountId, r.outcome])).toEqual([[b, "synced"]])
      expect(runExit(other)).toEqual({ code: ExitCodes.ok, message: undefined })

      // the admin uninstalled the app: deliberate, not something a cron run should keep failing on
      yield* connectAccount(a)
      yield* connections.markDisconnected(a, "the admin disconnected the app")
      const afterUninstall = yield* runner.run({ mode: "sync" })
      expect(afterUninstall.map((r) => [r.accountId, r.outcome])).toEqual([[b, "synced"]])
      expect(runExit(afterUninstall)).toEqual({ code: ExitCodes.ok, message: undefined })
      yield* connectAccount(a)
    })
  )

  it.effect("a database error before a stream's run began fails that stream with the database's message, recorded; not the account as a defect", () =>
    Effect.gen(function* () {
      const [a] = yield* connected
      const sql = yield* SqlClient.SqlClient
      // the run's row cannot be written (its start); the failure's row can
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'simulated refusal'; END $$;
        CREATE TRIGGER refuse_run BEFORE INSERT ON sync_runs FOR EACH ROW WHEN (NEW.finished_at IS NULL) EXECUTE FUNCTION refuse_run();`)
      const reports = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [a] }).pipe(
        Effect.ensuring(sql.unsafe(`DROP TRIGGER refuse_run ON sync_runs; DROP FUNCTION refuse_run();`).pipe(Effect.orDie))
      )
      expect(reports.map((r) => [r.outcome, r.streams.map((s) => [s.kind, s.outcome])])).toEqual([["failed", [["full", "failed"]]]])
      expect(reports[0]!.streams[0]!.error).toMatch(/^database error: .*simulated refusal/)
      expect(reports[0]!.message).toContain("simulated refusal")
      const [recorded] = yield* sql<{ outcome: string; error: string }>`
        SELECT outcome, error FROM sync_runs WHERE account_id = ${a} ORDER BY id DESC LIMIT 1`
      expect(recorded!.outcome).toBe("failed")
      expect(recorded!.error).toContain("simulated refusal")
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { Connections } from "../../src/auth/Connections.js"
import { ExitCodes } from "../../src/cli/ExitCode.js"
import { reportAndExit } from "../../src/sync/summary.js"
import { SyncRunner } from "../../src/sync/SyncRunner.js"
import { connectAccount } from "../support/connector.js"
import { TestEmulator } from "../support/emulator.js"
import { expectWarehouseExact, syncHarness } from "./harness.js"

layer(syncHarness({ accounts: 2, jobs: 1000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }, { fullPassEvery: Duration.hours(1) }), {
  timeout: 60_000,
  excludeTestServices: true
})("SyncRunner", (it) => {
  const connected = Effect.gen(function* () {
    const { accounts } = yield* TestEmulator
    const active = yield* (yield* Connections).listActive()
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
      // the last full pass is now older than the cadence (1 hour)
      yield* sql`UPDATE sync_checkpoints SET last_full_pass_at = now() - interval '2 hours' WHERE account_id = ${a}`
      const third = yield* runner.run({ mode: "sync", accounts: [a] })
      expect(third[0]!.streams[0]!.kind).toBe("full")
      expect(yield* expectWarehouseExact(a)).toBe(1000)
    })
  )

  it.effect("an account held by another process is skipped and said so; the others run", () =>
    Effect.gen(function* () {
      const [a, b] = yield* connected
      const sql = yield* SqlClient.SqlClient
      const reports = yield* Effect.scoped(
        Effect.gen(function* () {
          const other = yield* sql.reserve
          yield* other.execute("SELECT pg_advisory_lock(hashtext('account-sync:' || current_schema()), hashtext($1))", [b], undefined)
          const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
          yield* other.execute("SELECT pg_advisory_unlock(hashtext('account-sync:' || current_schema()), hashtext($1))", [b], undefined)
          return reports
        })
      )
      expect(reports.map((r) => [r.accountId, r.outcome])).toEqual([[a, "synced"], [b, "skipped"]])
      expect(reports[1]!.message).toContain("another account-sync process")
      const runs = yield* sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE account_id = ${b}`
      expect(runs.map((r) => r.outcome)).toEqual(["skipped"])
      // skipped is not a failure
      yield* reportAndExit(reports)
    })
  )

  it.effect("--account for an account that is not connected is reported, with the exit code that says what to do", () =>
    Effect.gen(function* () {
      const [a] = yield* connected
      const connections = yield* Connections
      const unknown = yield* (yield* SyncRunner).run({ mode: "sync", accounts: ["no-such-account"] })
      expect(unknown.map((r) => r.outcome)).toEqual(["failed"])
      expect((yield* Effect.flip(reportAndExit(unknown))).code).toBe(ExitCodes.failure)
      yield* connections.markRevoked(a, "test")
      const revoked = yield* (yield* SyncRunner).run({ mode: "sync", accounts: [a] })
      expect(revoked.map((r) => [r.outcome, r.message])).toEqual([["needs-reconnect", "connection is revoked (test)"]])
      expect((yield* Effect.flip(reportAndExit(revoked))).code).toBe(ExitCodes.needsReconnect)
      yield* connectAccount(a)
    })
  )
})

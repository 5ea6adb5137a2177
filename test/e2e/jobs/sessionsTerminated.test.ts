import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { env, expectExactAndRunsClosed, jobsPerAccount, twoWorkersBackfilling } from "../../support/hungWorker.js"
import { syncHarness } from "../../support/syncHarness.js"
import { accountsFullySynced, waitUntil } from "../../support/workers.js"

// the same 2 accounts, both workers live: the sessions of the one holding them are terminated (a restarted pgbouncer,
// an operator's pg_terminate_backend), its lease session among them
layer(syncHarness({ accounts: 2, jobs: jobsPerAccount, limits: { maxPoints: 100_000, restoreRate: 100_000 } }, { env }), {
  timeout: 300_000,
  excludeTestServices: true
})("a worker whose sessions are terminated", (it) => {
  it.scoped(
    "every session of the worker holding both accounts terminated twice mid-backfill: never two writers of an account (Postgres's own write log), exact",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { accounts } = yield* TestEmulator
        const { first, second } = yield* twoWorkersBackfilling(yield* TestSettings, 6)
        for (const round of [1, 2]) {
          yield* Effect.sleep("3 seconds")
          const terminated = yield* sql<{ n: number }>`
            SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name LIKE ${`% worker %:${first.child.pid}%`}`
          expect(terminated[0]!.n, `round ${round}`).toBeGreaterThan(0)
        }
        yield* waitUntil(
          "both backfills done",
          180,
          Effect.map(accountsFullySynced, (n) => n === 2)
        )
        yield* Effect.sleep("5 seconds")
        // per account, the writers in the order Postgres logged them: once a writer follows another, the earlier one never writes again
        for (const a of accounts) {
          const log = yield* sql<{ writer: string }>`SELECT writer FROM write_log WHERE account_id = ${a.accountId} ORDER BY n`
          const turns = log.map((r) => r.writer).filter((w, i, all) => i === 0 || all[i - 1] !== w)
          expect(new Set(turns).size, turns.join(" -> ")).toBe(turns.length)
        }
        yield* expectExactAndRunsClosed
        for (const worker of [first, second]) {
          if (worker.child.exitCode !== null) expect.fail(`a worker exited (${worker.child.exitCode}): ${(yield* worker.exit).stderr.slice(-3000)}`)
        }
      }),
    300_000
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { embeddedTestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

// The test database's pool has 12 connections: more accounts than that run at once must not need one each.
layer(syncHarness({ accounts: 16, jobs: 120, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), {
  timeout: 90_000,
  excludeTestServices: true
})("concurrency above the pool size", (it) => {
  // the embedded database runs one account at a time (its connections share one session)
  it.effect.skipIf(embeddedTestDatabase())("16 accounts at concurrency 16 on a 12-connection pool all sync exactly", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const reports = yield* (yield* SyncRunner).run({ mode: "backfill", concurrency: 16 })
      expect(reports.map((r) => r.outcome)).toEqual(accounts.map(() => "synced"))
      for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(120)
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

layer(syncHarness({ accounts: 1, jobs: 2000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("high-water mark after a resumed full pass", (it) => {
  it.effect("an edit behind the cursor of an interrupted full pass is landed by the next incremental sync", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const runner = yield* SyncRunner
      yield* connectAccount(accountId)
      const landedIds = Effect.map(
        sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId}`,
        (rows) => new Set(rows.map((r) => r.id))
      )

      // the first sync (a full pass, by job number) is interrupted after a few pages
      yield* admin.setFaults({ latencyRate: 1, latencyMs: 80, seed: 5 })
      const first = yield* Effect.fork(runner.run({ mode: "sync" }))
      for (let i = 0; i < 400 && (yield* landedIds).size < 300; i++) yield* Effect.sleep("25 millis")
      yield* Fiber.interrupt(first)
      yield* admin.setFaults({})
      const behind = yield* landedIds
      expect(behind.size).toBeGreaterThanOrEqual(300)
      expect(behind.size).toBeLessThanOrEqual(1000)

      // in the gap: a row behind the cursor is edited, then (later, service time) rows ahead of it
      const service = yield* admin.listRecords({ accountId, collection: "jobs" })
      const ahead = service.filter((j) => !behind.has(j.id)).map((j) => j.id)
      const edited = [...behind][0]!
      yield* admin.advanceClock({ seconds: 600 })
      yield* admin.editRecords({ accountId, collection: "jobs", ids: [edited], seed: 11 })
      // a page's worth of rows between that edit and the newest ones, so the edit is not on the incremental pass's
      // first page of old rows (which it lands before stopping)
      yield* admin.advanceClock({ seconds: 60 })
      yield* admin.editRecords({ accountId, collection: "jobs", ids: ahead.slice(0, 150), seed: 12 })
      yield* admin.advanceClock({ seconds: 3600 })
      yield* admin.editRecords({ accountId, collection: "jobs", ids: ahead.slice(150, 300), seed: 13 })

      const resumed = yield* runner.run({ mode: "sync" })
      expect(resumed[0]!.outcome).toBe("synced")
      expect([resumed[0]!.streams[0]!.kind, resumed[0]!.streams[0]!.resumed]).toEqual(["full", true])
      // the resumed pass never went back for the edited row
      const stale = yield* sql<{ title: string | null; updated_at: Date }>`
        SELECT title, updated_at FROM jobs WHERE account_id = ${accountId} AND id = ${edited}`
      const now = (yield* admin.listRecords({ accountId, collection: "jobs" })).find((j) => j.id === edited)!
      expect(stale[0]!.updated_at.getTime()).toBeLessThan(Date.parse(now.updatedAt as string))
      const [checkpoint] = yield* sql<{ high_water_mark: Date; pass_started_at: Date }>`
        SELECT high_water_mark, pass_started_at FROM sync_checkpoints WHERE account_id = ${accountId}`
      expect(checkpoint!.high_water_mark.getTime()).toBeLessThanOrEqual(checkpoint!.pass_started_at.getTime())

      const incremental = yield* runner.run({ mode: "sync" })
      expect(incremental[0]!.streams[0]!.kind).toBe("incremental")
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(2000)
    })
  )
})

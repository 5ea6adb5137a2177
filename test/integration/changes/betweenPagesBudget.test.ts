import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { eventStates, queueEvents } from "../../support/events.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

const jobs = 2000
// a bucket that binds: the backfill's pages wait for points, and so do the events' lookups between them
const harness = syncHarness({ accounts: 1, jobs, limits: { maxPoints: 10_000, restoreRate: 4_000 } })

layer(harness, { timeout: 120_000, excludeTestServices: true })("change events between two pages, on a bucket that binds", (it) => {
  it.effect("events applied mid-backfill share the account's cost budget with its pages: no THROTTLED answer, every event applied, exact", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const backfill = yield* Effect.fork((yield* SyncRunner).run({ mode: "backfill" }))
      const landed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`, (r) => r[0]!.n).pipe(Effect.orDie)
      let queued = 0
      for (let round = 0; round < 4; round++) {
        while ((yield* landed) < 300 * (round + 1)) yield* Effect.sleep("100 millis")
        const ids = (yield* sql<{ id: string }>`SELECT id FROM jobs ORDER BY md5(id || ${String(round)}) LIMIT 3`).map((r) => r.id)
        yield* admin.editRecords({ accountId, collection: "jobs", ids, seed: 300 + round })
        const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [j.id, String(j.updatedAt)]))
        yield* queueEvents(accountId, ids.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: updatedAt.get(id)! })))
        queued += ids.length
      }
      const [report] = yield* Fiber.join(backfill)
      expect(report!.outcome).toBe("synced")
      // the run's counts: the budget's figures over the run, the events' lookups included
      expect(report!.streams[0]!.counts.throttled).toBe(0)
      expect(report!.streams[0]!.counts.throttleWaitMs).toBeGreaterThan(0)
      expect(yield* eventStates(accountId)).toEqual({ applied: queued })
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
    })
  )
})

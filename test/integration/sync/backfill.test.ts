import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { pagesToRead, syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

// 3 accounts x 5,000 jobs. The bucket restores fast here so the test measures landing, not waiting; the tight
// bucket has its own test.
layer(syncHarness({ accounts: 3, jobs: 5000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), { timeout: 120_000, excludeTestServices: true })(
  "backfill, incremental sync and full pass",
  (it) => {
    it.effect("a backfill of 3 accounts x 5,000 jobs lands every row exactly", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        for (const a of accounts) yield* connectAccount(a.accountId)
        const runner = yield* SyncRunner
        const reports = yield* runner.run({ mode: "backfill" })
        expect(reports.map((r) => r.outcome)).toEqual(["synced", "synced", "synced"])
        for (const a of accounts) expect(yield* expectStreamExact(jobScalarsStream, a.accountId)).toBe(5000)
        for (const r of reports) {
          expect(r.streams[0]!.counts.rows).toBe(5000)
          expect(r.streams[0]!.counts.pages).toBe(pagesToRead(5000, 100))
        }
        const sql = yield* SqlClient.SqlClient
        const runs = yield* sql<{ outcome: string; kind: string; pages: number; rows: number }>`
          SELECT outcome, kind, pages, rows FROM sync_runs ORDER BY account_id`
        expect(runs).toEqual(accounts.map(() => ({ outcome: "succeeded", kind: "full", pages: pagesToRead(5000, 100), rows: 5000 })))
      })
    )

    it.effect("after edits and deletions, an incremental sync lands the edits; the next full pass marks the deletions", () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const sql = yield* SqlClient.SqlClient
        const target = accounts[0]!.accountId
        yield* admin.advanceClock({ seconds: 600 })
        const edited = yield* admin.editRecords({ accountId: target, collection: "jobs", count: 40, seed: 7 })
        const deleted = yield* admin.deleteRecords({ accountId: target, collection: "jobs", count: 25, seed: 8 })
        const runner = yield* SyncRunner

        const incremental = yield* runner.run({ mode: "sync", accounts: [target] })
        expect(incremental[0]!.outcome).toBe("synced")
        const pass = incremental[0]!.streams[0]!
        expect(pass.kind).toBe("incremental")
        // newest-first, it stops after the edited rows: far fewer pages than a full pass
        expect(pass.counts.pages).toBeLessThan(5)
        const titles = yield* sql<{ id: string; title: string | null }>`
          SELECT id, title FROM jobs WHERE account_id = ${target} AND id IN ${sql.in(edited.ids)}`
        const service = new Map((yield* admin.listRecords({ accountId: target, collection: "jobs" })).map((j) => [j.id, j]))
        const liveEdited = edited.ids.filter((id) => service.has(id))
        expect(titles.filter((r) => service.has(r.id)).map((r) => [r.id, r.title]).sort()).toEqual(
          liveEdited.map((id) => [id, service.get(id)!.title]).sort()
        )
        // deletions are not visible to an incremental pass
        const marked = yield* sql`SELECT id FROM jobs WHERE account_id = ${target} AND deleted_at IS NOT NULL`
        expect(marked).toEqual([])

        const full = yield* runner.run({ mode: "backfill", accounts: [target] })
        expect(full[0]!.streams[0]!.counts.rowsDeleted).toBe(deleted.ids.length)
        const nowMarked = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${target} AND deleted_at IS NOT NULL`
        expect(nowMarked.map((r) => r.id).sort()).toEqual([...deleted.ids].sort())
        expect(yield* expectStreamExact(jobScalarsStream, target)).toBe(5000 - deleted.ids.length)
      })
    )
  }
)

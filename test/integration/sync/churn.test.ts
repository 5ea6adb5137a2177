import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { streamNamed } from "../../../src/sync/streams/index.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * The emulator's churn moves the data under the pager: before each of the first six queries of jobs and of invoices
 * (an `updatedAt`-filtered stream, with line items and custom fields), records of that collection are created,
 * edited and deleted at random positions, behind and ahead of the cursor. (A deletion made while the pass's closing
 * id listing reads past the row is the next full pass's; the README says so.) With offset cursors (a deletion behind the cursor shifts every later
 * row) and with keyset cursors, a backfill and a later full pass under churn, each followed by one incremental sync
 * without churn, leave the warehouse equal to the service: no live row missing, none falsely marked deleted, every
 * deleted one marked.
 */
const streams = [jobScalarsStream, streamNamed("invoices")]

for (const cursorMode of ["offset", "keyset"] as const) {
  layer(
    syncHarness({ jobs: 900, limits: { maxPoints: 100_000, restoreRate: 1_000_000, maxPageSize: 100 } }, { env: { SYNC_STREAMS: "jobs,invoices" } }),
    { timeout: 180_000, excludeTestServices: true }
  )(`exact under churn, ${cursorMode} cursors`, (it) => {
    const churnedPass = (mode: "backfill" | "sync", seed: number) =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* admin.setCursorMode({ mode: cursorMode, accountId })
        yield* admin.setChurn({ accountId, collections: ["jobs", "invoices"], creates: 1, edits: 2, deletes: 1.5, queries: 6, seed })
        const runner = yield* SyncRunner
        const pass = yield* runner.run({ mode, accounts: [accountId] })
        yield* admin.setChurn({ accountId, stop: true })
        const churned = yield* admin.churnLog({ accountId })
        const after = yield* runner.run({ mode: "sync", accounts: [accountId] })
        return { pass, after, churned, accountId }
      })

    it.effect("a backfill under churn, then one incremental sync: every stream equals the service", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        yield* connectAccount(accounts[0]!.accountId)
        const { pass, after, churned, accountId } = yield* churnedPass("backfill", 17)
        expect(pass[0]!.outcome).toBe("synced")
        expect(after[0]!.outcome).toBe("synced")
        // the churn did move the data: records deleted and created on both sides of the pages
        for (const kind of ["create", "update", "destroy"] as const) {
          for (const collection of ["jobs", "invoices"]) expect(churned.filter((c) => c.kind === kind && c.collection === collection).length, `${kind} ${collection}`).toBeGreaterThan(3)
        }
        for (const stream of streams) yield* expectStreamExact(stream, accountId)
      })
    )

    it.effect("a later full pass under churn, then one incremental sync: every stream equals the service, every deleted row marked", () =>
      Effect.gen(function* () {
        const { admin } = yield* TestEmulator
        yield* admin.advanceClock({ seconds: 120 })
        const { pass, after, churned, accountId } = yield* churnedPass("backfill", 29)
        expect(pass[0]!.outcome).toBe("synced")
        expect(after[0]!.outcome).toBe("synced")
        for (const stream of streams) yield* expectStreamExact(stream, accountId)
        const sql = yield* SqlClient.SqlClient
        const destroyed = churned.filter((c) => c.kind === "destroy" && c.collection === "jobs").map((c) => c.id)
        const stillLive = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId} AND id IN ${sql.in(destroyed)} AND deleted_at IS NULL`
        expect(stillLive).toEqual([])
      })
    )
  })
}

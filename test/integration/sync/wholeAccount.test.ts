import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/sync/SyncRunner.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectAccountExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

// Every stream of the account, with links, line items and custom fields: SYNC_STREAMS and SYNC_EXCLUDE_FIELDS empty.
const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }

layer(syncHarness({ jobs: 240, limits: { maxPoints: 10_000, restoreRate: 100_000 } }, { env: wholeAccount }), { timeout: 180_000, excludeTestServices: true })(
  "the whole account",
  (it) => {
    it.effect("a backfill lands every collection exactly: rows, links, line items (also past the inner page) and custom fields", () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        // parents with more line items than a page's inner page take follow-up queries
        yield* admin.editLineItems(accountId, "invoices", { count: 3, add: 45, seed: 11 })
        yield* admin.editLineItems(accountId, "jobs", { count: 2, add: 40, seed: 12 })
        yield* connectAccount(accountId)
        const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
        expect(reports[0]!.outcome).toBe("synced")
        expect(reports[0]!.streams.map((s) => s.stream)).toEqual(allStreams.map((s) => s.name))
        const counts = yield* expectAccountExact(allStreams, accountId)
        expect(counts.jobs).toBe(240)
        for (const stream of allStreams) expect(counts[stream.name], stream.name).toBeGreaterThan(0)
        const sql = yield* SqlClient.SqlClient
        const big = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM (SELECT invoice_id FROM invoice_line_items GROUP BY invoice_id HAVING count(*) > 45) t`
        expect(big[0]!.n).toBeGreaterThanOrEqual(3)
      })
    )

    it.effect("after creates, edits, deletes and line item changes in every collection, the next sync is exact again", () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* admin.advanceClock(600)
        let seed = 100
        for (const stream of allStreams) {
          yield* admin.createRecords(accountId, stream.connection, 3, ++seed)
          yield* admin.editRecords(accountId, stream.connection, { count: 4, seed: ++seed })
          yield* admin.deleteRecords(accountId, stream.connection, { count: 2, seed: ++seed })
        }
        for (const collection of ["jobs", "invoices", "quotes", "requests"]) {
          yield* admin.editLineItems(accountId, collection, { count: 3, add: 1, remove: 1, edit: 1, seed: ++seed })
        }
        // a full pass for every stream: deletions are seen only by full passes
        const reports = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [accountId] })
        expect(reports[0]!.outcome).toBe("synced")
        yield* expectAccountExact(allStreams, accountId)
      })
    )

    it.effect("an incremental sync brings the edits of the collections that filter by update time", () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* admin.advanceClock(600)
        const edited: Record<string, ReadonlyArray<string>> = {}
        for (const collection of ["clients", "invoices", "quotes", "requests", "jobs"]) {
          edited[collection] = (yield* admin.editRecords(accountId, collection, { count: 5, seed: 300 + collection.length })).ids
        }
        const reports = yield* (yield* SyncRunner).run({ mode: "sync", accounts: [accountId] })
        expect(reports[0]!.outcome).toBe("synced")
        const sql = yield* SqlClient.SqlClient
        for (const stream of allStreams.filter((s) => edited[s.name] !== undefined)) {
          const service = new Map((yield* admin.listRecords(accountId, stream.connection)).map((r) => [String(r.id), r]))
          const rows = yield* sql<{ id: string; updated_at: Date }>`
            SELECT id, updated_at FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND id IN ${sql.in(edited[stream.name]!)}`
          expect(rows.map((r) => [r.id, r.updated_at.getTime()]).sort(), stream.name).toEqual(
            edited[stream.name]!.map((id) => [id, Date.parse(String(service.get(id)!.updatedAt))]).sort()
          )
        }
      })
    )
  }
)

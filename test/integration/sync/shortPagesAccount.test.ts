import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { fullPassesOnly } from "../../../src/sync/pass/Incremental.js"
import { type AccountReport, SyncRunner } from "../../../src/run/SyncRunner.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectAccountExact, expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * The whole account (every stream, links, line items and custom fields) against a service that withholds a share of
 * the nodes of every page and of every line item connection (pageInfo and totalCount as paged): every node it returns
 * lands, incremental passes of both strategies reach their marks, and a full pass marks exactly the deleted rows.
 */
const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "", SYNC_FULL_PASS_EVERY: "1 hour" }
const incremental = allStreams.filter((s) => s.incremental !== fullPassesOnly)
const streamsOf = (report: AccountReport) => Object.fromEntries(report.streams.map((s) => [s.stream, s]))

layer(syncHarness({ accounts: 1, jobs: 400, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } }, { env: wholeAccount }), {
  timeout: 240_000,
  excludeTestServices: true
})("the whole account, nodes withheld", (it) => {
  it.effect("backfill, incremental sync (updatedAt and newest-first), full pass: every stream exact on what the service returns", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      // parents with more line items than a page asks for: their follow-ups page past withheld line items too
      yield* admin.editLineItems({ accountId, collection: "invoices", count: 4, add: 50, seed: 21 })
      yield* admin.editLineItems({ accountId, collection: "jobs", count: 3, add: 45, seed: 22 })
      yield* admin.setPagingFaults({ accountId, withhold: 0.25, seed: 9 })
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      const sql = yield* SqlClient.SqlClient

      const [backfill] = yield* runner.run({ mode: "backfill" })
      expect(backfill!.message ?? "").toBe("")
      expect(backfill!.outcome).toBe("synced")
      const counts = yield* expectAccountExact(allStreams, accountId, { served: true })
      for (const stream of allStreams) {
        const all = (yield* admin.listRecords({ accountId, collection: stream.connection })).length
        expect(counts[stream.name], `${stream.name}: some withheld, the rest landed`).toBeLessThan(all)
        expect(counts[stream.name], stream.name).toBeGreaterThan(all * 0.6)
      }
      // a parent's line items past its first page, withheld ones skipped, landed through follow-ups
      const big = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM (SELECT invoice_id FROM invoice_line_items WHERE account_id = ${accountId} AND deleted_at IS NULL
          GROUP BY invoice_id HAVING count(*) > 25) t`
      expect(big[0]!.n).toBeGreaterThanOrEqual(1)

      // edits and creates: each incremental stream's pass (updatedAt filter, or newest-first for jobs) reaches its mark
      yield* admin.advanceClock({ seconds: 600 })
      let seed = 40
      for (const stream of allStreams) {
        yield* admin.createRecords({ accountId, collection: stream.connection, count: 4, seed: ++seed })
        yield* admin.editRecords({ accountId, collection: stream.connection, count: 12, seed: ++seed })
      }
      const [sync] = yield* runner.run({ mode: "sync" })
      expect(sync!.outcome).toBe("synced")
      const byStream = streamsOf(sync!)
      for (const stream of incremental) {
        expect(byStream[stream.name]!.kind, stream.name).toBe("incremental")
        yield* expectStreamExact(stream, accountId, { served: true })
        const checkpoint = Option.getOrThrow(yield* (yield* Checkpoints).read(accountId, stream.name))
        expect(checkpoint.passKind, `${stream.name}: its pass finished`).toBeNull()
        // the edits are newer (service time) than the pass's start: the mark moved to the start, as far as it may
        expect(checkpoint.highWaterMark, `${stream.name}: its mark moved to the edits`).toEqual(checkpoint.lastIncrementalPassAt)
      }

      // deletions, of rows the service returns and of rows it withholds: the full pass marks exactly them
      const deleted: Record<string, ReadonlyArray<string>> = {}
      for (const stream of allStreams) deleted[stream.name] = (yield* admin.deleteRecords({ accountId, collection: stream.connection, count: 6, seed: ++seed })).ids
      const [full] = yield* runner.run({ mode: "backfill", restart: true })
      expect(full!.outcome).toBe("synced")
      yield* expectAccountExact(allStreams, accountId, { served: true })
      for (const stream of allStreams) {
        const served = new Set((yield* admin.listRecords({ accountId, collection: stream.connection, servedTo: app.clientId })).map((r) => String(r.id)))
        const marked = yield* sql<{ id: string }>`
          SELECT id FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND deleted_at IS NOT NULL ORDER BY id`
        // the deleted rows the warehouse had (withheld ones never landed): marked, and not one row the service still returns
        expect(marked.filter((r) => served.has(r.id)), `${stream.name}: live rows marked deleted`).toEqual([])
        const landedDeleted = deleted[stream.name]!.filter((id) => marked.some((r) => r.id === id) || !served.has(id))
        expect(landedDeleted.length, stream.name).toBe(deleted[stream.name]!.length)
      }
    })
  )
})

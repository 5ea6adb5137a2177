import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Metric, Option } from "effect"
import { deletionLines } from "../../../src/cli/status.js"
import * as Metrics from "../../../src/observability/metrics.js"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { StreamStatus, StreamStatusLive } from "../../../src/health/StreamStatus.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { jobScalarsStream, jobsOnlySettings } from "../../support/jobsOnly.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { serviceProxy } from "../../support/proxy.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * A service that authorizes each node leaves some out of a page after paging: the page holds fewer than `first` nodes
 * while `pageInfo.hasNextPage` is true (the emulator's `withhold` paging fault, the same nodes every time). The end of
 * the list is what the service says, and rows are marked deleted only on a complete listing.
 */

const generous = { maxPoints: 1_000_000, restoreRate: 1_000_000 }

const liveIds = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL ORDER BY id`
    return rows.map((r) => r.id)
  })

const deletedRows = (table: string, accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE account_id = ${accountId} AND deleted_at IS NOT NULL ORDER BY id`
    return rows.map((r) => r.id)
  })

layer(syncHarness({ accounts: 2, jobs: 2370, limits: generous }), { timeout: 180_000, excludeTestServices: true })("pages shorter than first", (it) => {
  it.effect("a backfill under withheld nodes lands every node the service returns over the whole list", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* admin.setPagingFaults({ accountId, withhold: 0.3, seed: 11 })
      yield* connectAccount(accountId)
      const [report] = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [accountId] })
      expect(report!.outcome).toBe("synced")
      // every node the service returns, every column, and nothing else
      const served = yield* expectStreamExact(jobScalarsStream, accountId, { served: true })
      expect(served).toBeGreaterThan(1500)
      expect(served).toBeLessThan(1800)
      // the pass paged every position of the list: about 2370 / 96 pages, not ended at the first short one
      expect(report!.streams[0]!.counts.pages).toBeGreaterThan(24)
      // the pass saw the service count more than it returns: it listed the ids, and records what it withholds
      const checkpoint = yield* (yield* StreamStatus).list([jobScalarsStream])
      const mine = checkpoint.find((s) => s.accountId === accountId)!
      expect(mine.rowsWithheld).toBe(2370 - served)
      expect(mine.deletionsUnchecked).toBeNull()
    }).pipe(Effect.provide(StreamStatusLive))
  )

  it.effect("a full pass under withheld nodes marks no live row deleted, and marks the truly deleted ones", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const accountId = accounts[1]!.accountId
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      // every row landed while the service returned whole pages
      const [first] = yield* runner.run({ mode: "backfill", accounts: [accountId] })
      expect(first!.outcome).toBe("synced")
      expect((yield* liveIds(accountId)).length).toBe(2370)
      // then it withholds 20% of the nodes (a permission change), and rows are deleted: some it returns, some it withholds
      yield* admin.setPagingFaults({ accountId, withhold: 0.2, seed: 5 })
      const served = new Set((yield* admin.listRecords({ accountId, collection: "jobs", servedTo: app.clientId })).map((r) => String(r.id)))
      const all = (yield* admin.listRecords({ accountId, collection: "jobs" })).map((r) => String(r.id))
      const shownGone = all.filter((id) => served.has(id)).filter((_, i) => i % 250 === 7)
      const hiddenGone = all.filter((id) => !served.has(id)).filter((_, i) => i % 100 === 3)
      expect(hiddenGone.length).toBeGreaterThan(2)
      yield* admin.deleteRecords({ accountId, collection: "jobs", ids: [...shownGone, ...hiddenGone] })

      const [full] = yield* runner.run({ mode: "backfill", restart: true, accounts: [accountId] })
      expect(full!.message ?? "").toBe("")
      expect(full!.outcome).toBe("synced")
      // exactly the deleted rows are marked: none of the rows the service still has, withheld or not
      expect(yield* deletedRows("jobs", accountId)).toEqual([...shownGone, ...hiddenGone].sort())
      expect((yield* liveIds(accountId)).length).toBe(2370 - shownGone.length - hiddenGone.length)
      expect(full!.streams[0]!.counts.rowsDeleted).toBe(shownGone.length + hiddenGone.length)
      // the withheld rows it still counts were kept, not guessed gone
      expect(full!.streams[0]!.counts.rowsConfirmed).toBe(all.length - served.size - hiddenGone.length)
    })
  )
})

/**
 * A service whose ids listing says the list ends (`hasNextPage: false`) half way through, while its count says
 * otherwise: the listing proves nothing. Jobs (filtered by id) need no listing: each row the pass did not see is asked
 * for by id. Quotes (no id filter) are asked for by their creation time. Without the creation time (excluded), only a
 * listing could prove them gone: they are kept live, and the pass logs, counts and shows it.
 */
let cutListing = false
const cuttingProxy = serviceProxy({
  after: ({ operationName, variables, answer }) => {
    if (!cutListing || !/^(Jobs|Quotes)Ids/.test(operationName ?? "") || (variables.offset as number) < 200) return answer
    const json = JSON.parse(answer)
    json.data[operationName!.startsWith("Jobs") ? "jobs" : "quotes"].pageInfo.hasNextPage = false
    return JSON.stringify(json)
  }
})

layer(syncHarness({ accounts: 1, jobs: 1000, limits: generous }, { serviceUrl: cuttingProxy, env: { SYNC_STREAMS: "jobs,quotes", SYNC_EXCLUDE_FIELDS: jobsOnlySettings.SYNC_EXCLUDE_FIELDS! } }), {
  timeout: 120_000,
  excludeTestServices: true
})("a listing that ends short of the count", (it) => {
  it.effect("by id and by creation time: exactly the deleted rows marked, withheld ones kept", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      yield* runner.run({ mode: "backfill" })
      const goneJobs = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 5, seed: 3 })).ids
      const goneQuotes = (yield* admin.deleteRecords({ accountId, collection: "quotes", count: 5, seed: 4 })).ids
      // the service withholds some nodes: the pass lands fewer than it counts, so quotes are listed before the sweep
      yield* admin.setPagingFaults({ accountId, withhold: 0.1, seed: 2 })
      cutListing = true
      const [full] = yield* runner.run({ mode: "backfill", restart: true })
      cutListing = false
      expect(full!.outcome).toBe("synced")
      expect(yield* deletedRows("jobs", accountId)).toEqual([...goneJobs].sort())
      expect(yield* deletedRows("quotes", accountId)).toEqual([...goneQuotes].sort())
      // rows newly withheld stay live: by id they are proven there (counted, not returned), by creation time the
      // service counts a record it does not return at that time, which may be this one or another: kept, and said so
      const quotesAt = (yield* admin.listRecords({ accountId, collection: "quotes" })).length
      const quotesServed = (yield* admin.listRecords({ accountId, collection: "quotes", servedTo: app.clientId })).length
      const status = yield* (yield* StreamStatus).list(allStreams.filter((st) => st.name === "jobs" || st.name === "quotes"))
      expect(status.find((s) => s.stream === "jobs")!.deletionsUnchecked).toBeNull()
      expect(status.find((s) => s.stream === "quotes")!.deletionsUnchecked).toBe(
        `not proven gone, kept live: ${quotesAt - quotesServed} row(s): withheld from this app or gone (the service counts a record it does not return with the same created_at)`
      )
      const sql = yield* SqlClient.SqlClient
      const liveQuotes = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM quotes WHERE account_id = ${accountId} AND deleted_at IS NULL`
      expect(liveQuotes[0]!.n).toBe(quotesAt)
    }).pipe(Effect.provide(StreamStatusLive))
  )
})

layer(
  syncHarness({ accounts: 1, jobs: 1000, limits: generous }, { serviceUrl: cuttingProxy, env: { SYNC_STREAMS: "quotes", SYNC_EXCLUDE_FIELDS: "quotes.createdAt" } }),
  { timeout: 120_000, excludeTestServices: true }
)("a listing that ends short of the count, and no other proof", (it) => {
  it.effect("nothing marked deleted: the rows are kept live, the pass logs, counts and shows it; the next whole listing marks them", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      yield* runner.run({ mode: "backfill" })
      const gone = (yield* admin.deleteRecords({ accountId, collection: "quotes", count: 5, seed: 3 })).ids
      const skipped = Metrics.forAccount(Metrics.sweepsSkipped, accountId)
      const before = (yield* Metric.value(skipped)).count
      cutListing = true
      const [full] = yield* runner.run({ mode: "backfill", restart: true })
      cutListing = false
      expect(full!.outcome).toBe("synced")
      // the deleted rows are not marked on a listing that cannot prove them gone; nothing else either
      expect(yield* deletedRows("quotes", accountId)).toEqual([])
      expect((yield* Metric.value(skipped)).count).toBe(before + 1)
      const quotes = allStreams.filter((st) => st.name === "quotes")
      const status = yield* (yield* StreamStatus).list(quotes)
      expect(status[0]!.deletionsUnchecked).toMatch(
        /^not proven gone, kept live: \d+ row\(s\): the listing proves nothing: the service said the list ends after \d+ positions but counts 495 rows$/
      )
      expect(deletionLines(status, [], { now: Date.now(), wide: true, maxWidth: 120 })).toContain(`${accountId} quotes: deletions not checked: not proven gone`)
      // the pass is finished all the same (not resumed for ever); the next full pass with a whole listing marks them
      expect(Option.getOrThrow(yield* (yield* Checkpoints).read(accountId, "quotes")).passKind).toBeNull()
      const [next] = yield* runner.run({ mode: "backfill", restart: true })
      expect(next!.outcome).toBe("synced")
      expect(yield* deletedRows("quotes", accountId)).toEqual([...gone].sort())
      const after = yield* (yield* StreamStatus).list(quotes)
      expect(after[0]!.deletionsUnchecked).toBeNull()
    }).pipe(Effect.provide(StreamStatusLive))
  )
})

layer(syncHarness({ accounts: 1, jobs: 300, limits: { maxPoints: 150, restoreRate: 1_000_000 } }), { timeout: 180_000, excludeTestServices: true })(
  "an incremental pass over short pages",
  (it) => {
    it.effect("newest-first under withheld nodes (pages of 4, some empty) reaches its mark: every edit the service returns lands", () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* admin.setPagingFaults({ accountId, withhold: 0.5, seed: 4 })
        yield* connectAccount(accountId)
        const runner = yield* SyncRunner
        const [backfill] = yield* runner.run({ mode: "backfill" })
        expect(backfill!.message ?? "").toBe("")
        expect(backfill!.outcome).toBe("synced")
        yield* expectStreamExact(jobScalarsStream, accountId, { served: true })
        // edits newer than the mark: at the top of the newest-first order, over several pages of 4 (half withheld)
        yield* admin.advanceClock({ seconds: 600 })
        yield* admin.editRecords({ accountId, collection: "jobs", count: 40, seed: 8 })
        const [sync] = yield* runner.run({ mode: "sync" })
        expect(sync!.outcome).toBe("synced")
        expect(sync!.streams[0]!.kind).toBe("incremental")
        expect(sync!.streams[0]!.counts.pages).toBeGreaterThan(10)
        yield* expectStreamExact(jobScalarsStream, accountId, { served: true })
        const checkpoint = Option.getOrThrow(yield* (yield* Checkpoints).read(accountId, "jobs"))
        expect(checkpoint.passKind).toBeNull()
        expect(checkpoint.highWaterMark).toEqual(checkpoint.lastIncrementalPassAt)
      })
    )
  }
)

/** The first account's backfill, failed on the jobs stream's connection shape (`where`: from the position on); its id. */
const backfillFails = (where: string) =>
  Effect.gen(function* () {
    const { accounts } = yield* TestEmulator
    const accountId = accounts[0]!.accountId
    yield* connectAccount(accountId)
    const [report] = yield* (yield* SyncRunner).run({ mode: "backfill" })
    expect(report!.outcome).toBe("failed")
    expect(report!.message).toBe(`jobs: account ${accountId}, stream jobs: unexpected connection shape (${where}`)
    return accountId
  })

/** A service whose pages say nothing about whether the list goes on (no pageInfo). */
const noPageInfo = serviceProxy({
  after: ({ operationName, variables, answer }) => {
    if (operationName !== "JobsPage" || (variables.offset as number) === 0) return answer
    const json = JSON.parse(answer)
    delete json.data.jobs.pageInfo
    return JSON.stringify(json)
  }
})

layer(syncHarness({ accounts: 1, jobs: 300, limits: generous }, { serviceUrl: noPageInfo }), { timeout: 60_000, excludeTestServices: true })(
  "a page without pageInfo",
  (it) => {
    it.effect("fails the stream naming the account, the stream and the position: never taken for the end of the list", () =>
      Effect.gen(function* () {
        const accountId = yield* backfillFails("page at position 99): pageInfo: is missing")
        // the pass is not finished: the next run resumes it after the first page
        expect(Option.getOrThrow(yield* (yield* Checkpoints).read(accountId, "jobs"))).toMatchObject({ passKind: "full", position: 100 })
      })
    )
  }
)

/** A service that answers a job's line items without the totalCount asked (nothing then proves a missing one gone). */
const noChildCount = serviceProxy({
  after: ({ operationName, answer }) => {
    if (operationName !== "JobsPage") return answer
    const json = JSON.parse(answer)
    delete json.data.jobs.nodes[3].lineItems.totalCount
    return JSON.stringify(json)
  }
})

layer(
  syncHarness({ accounts: 1, jobs: 50, limits: generous }, { serviceUrl: noChildCount, env: { SYNC_STREAMS: "jobs", SYNC_EXCLUDE_FIELDS: "jobs.customFields" } }),
  { timeout: 60_000, excludeTestServices: true }
)("line items without their count", (it) => {
  it.effect("fail the stream naming the field and the position: a parent's line items are never landed without what proves the missing ones gone", () =>
    Effect.gen(function* () {
      const accountId = yield* backfillFails("page at position 0): lineItems: totalCount: is missing")
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM job_line_items WHERE account_id = ${accountId}`)[0]!.n).toBe(0)
    })
  )
})

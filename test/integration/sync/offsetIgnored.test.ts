import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { serviceProxy } from "../../support/proxy.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * Every loop that asks the service again is bounded, and says what the service did. A service that ignores `offset`
 * (every page asked by position is the first one) is paged after its cursors instead; one that ignores `after` too
 * stops the stream at once; a page that never joins is asked again a bounded number of times.
 */

const generous = { maxPoints: 1_000_000, restoreRate: 1_000_000 }

layer(syncHarness({ accounts: 1, jobs: 1200, limits: generous }), { timeout: 180_000, excludeTestServices: true })("a service that ignores offset", (it) => {
  it.effect("is paged after its cursors: exact under deletions behind the pass, its deletions marked by the full pass", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* admin.setPagingFaults({ accountId, ignoreOffset: true })
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      const before = (yield* admin.stats()).costPointsByAccount[accountId] ?? 0
      // data moving under the pager: offset cursors (a deletion behind one shifts every later row)
      yield* admin.setChurn({ accountId, creates: 1, edits: 1, deletes: 2, queries: 8, seed: 3 })
      const [backfill] = yield* runner.run({ mode: "backfill" })
      yield* admin.setChurn({ accountId, stop: true })
      expect(backfill!.message ?? "").toBe("")
      expect(backfill!.outcome).toBe("synced")
      // points: about what paging 1,200 rows costs, not a loop of first pages (a page found out, one from the start again)
      const spent = (yield* admin.stats()).costPointsByAccount[accountId]! - before
      expect(spent).toBeLessThan(1.6 * 1200 * 32)
      const [sync] = yield* runner.run({ mode: "sync" })
      expect(sync!.outcome).toBe("synced")
      yield* expectStreamExact(jobScalarsStream, accountId)

      const gone = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 7, seed: 9 })).ids
      const [full] = yield* runner.run({ mode: "backfill", restart: true })
      expect(full!.outcome).toBe("synced")
      yield* expectStreamExact(jobScalarsStream, accountId)
      const sql = yield* SqlClient.SqlClient
      const marked = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NOT NULL ORDER BY id`
      expect(marked.map((r) => r.id).filter((id) => gone.includes(id)).sort()).toEqual([...gone].sort())
    })
  )
})

/** A service that ignores `offset` and `after`: every page is the first. */
let firstPages = 0
const firstPageOnly = serviceProxy({
  variables: ({ operationName, variables }) => {
    if (operationName?.startsWith("JobsPage") !== true) return variables
    firstPages++
    return { ...variables, ...("offset" in variables ? { offset: 0 } : {}), ...("after" in variables ? { after: null } : {}) }
  }
})

layer(syncHarness({ accounts: 1, jobs: 500, limits: generous }, { serviceUrl: firstPageOnly }), { timeout: 120_000, excludeTestServices: true })(
  "a service that ignores offset and after",
  (it) => {
    it.effect("stops the stream at once, naming the account, the stream, where and what the service did", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* connectAccount(accountId)
        const [report] = yield* (yield* SyncRunner).run({ mode: "backfill" })
        expect(report!.outcome).toBe("failed")
        const message = report!.message!
        expect(message).toContain(`account ${accountId}, stream jobs: paging stopped at after cursor "`)
        expect(message).toMatch(/: the service answered after cursor "[^"]+" with the rows at the start of the list: it ignores `after` as well as `offset`$/)
        // a handful of pages: the first, the one that showed `offset` ignored (and the page fetched ahead of it), the
        // first again by cursor, the one after it
        expect(firstPages).toBeLessThanOrEqual(6)
      })
    )
  }
)

/** Every follow-up of a parent's line items finds another parent there: the list keeps moving under the pass. */
let followUps = 0
const movingParents = serviceProxy({
  after: ({ operationName, answer }) => {
    if (operationName !== "JobsLineItemsPage") return answer
    followUps++
    const json = JSON.parse(answer)
    for (const node of json.data.jobs.nodes) node.id = `${node.id}-moved`
    return JSON.stringify(json)
  }
})

layer(
  syncHarness({ accounts: 1, jobs: 300, limits: generous }, { serviceUrl: movingParents, env: { SYNC_STREAMS: "jobs", SYNC_EXCLUDE_FIELDS: "" } }),
  { timeout: 120_000, excludeTestServices: true }
)("a page that never joins", (it) => {
  it.effect("is asked again a bounded number of times, then the stream fails naming the offset and what the service did", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      // a job at the start with more line items than a page asks for: its follow-up never finds it again
      const job = (yield* admin.listRecords({ accountId, collection: "jobs" }))[5]!
      yield* admin.editLineItems({ accountId, collection: "jobs", ids: [String(job.id)], add: 45, seed: 1 })
      yield* connectAccount(accountId)
      const [report] = yield* (yield* SyncRunner).run({ mode: "backfill" })
      expect(report!.outcome).toBe("failed")
      expect(report!.message).toMatch(/stream jobs: paging stopped at offset \d+: asked 11 times, from offset \d+ back to offset 0, \d+ points spent, and the page never joined the rows landed \(last: the list moved while the children of a page were followed up\): the list keeps moving under the pass$/)
      // one follow-up per ask of the page: bounded
      expect(followUps).toBe(11)
    })
  )
})

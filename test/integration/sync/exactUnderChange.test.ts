import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { serviceProxy } from "../../support/proxy.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

/**
 * The service's data moves while the pager pages: before some pages of a full pass, jobs behind the requested position
 * are deleted (with offset positions that shifts every later row one place back: the row at the page's start would be
 * skipped by a naive pager) and edited, and jobs ahead are deleted and created.
 */
let pagesSeen = 0
const deleted: Array<string> = []
const churning = serviceProxy({
  before: ({ operationName, variables }, emulator) =>
    Effect.gen(function* () {
      if (operationName !== "JobsPage" || typeof variables.offset !== "number" || (variables.filter as { ids?: unknown } | null)?.ids) return
      pagesSeen++
      if (pagesSeen < 3 || pagesSeen > 10 || pagesSeen % 2 === 1) return
      const accountId = emulator.accounts[0]!.accountId
      const live = yield* emulator.admin.listRecords({ accountId, collection: "jobs" })
      const offset = variables.offset as number
      // behind: rows of pages already answered (the page before this one may still be in flight: this one was
      // fetched ahead of its answer)
      const behind = live.slice(0, Math.max(0, offset - 100)).map((j) => j.id)
      const ahead = live.slice(offset + 100).map((j) => j.id)
      const pick = (ids: ReadonlyArray<string>, n: number, salt: number) => ids.filter((_, i) => (i * 7919 + salt) % Math.max(1, Math.floor(ids.length / n)) === 0).slice(0, n)
      const gone = [...pick(behind, 3, pagesSeen), ...pick(ahead, 2, pagesSeen)]
      deleted.push(...(yield* emulator.admin.deleteRecords({ accountId, collection: "jobs", ids: gone })).ids)
      yield* emulator.admin.editRecords({ accountId, collection: "jobs", ids: pick(behind.filter((id) => !gone.includes(id)), 2, pagesSeen + 1) })
      yield* emulator.admin.createRecords({ accountId, collection: "jobs", count: 3 })
    })
})

layer(syncHarness({ accounts: 1, jobs: 1500, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } }, { serviceUrl: churning }), {
  timeout: 120_000,
  excludeTestServices: true
})("exact under change", (it) => {
  it.effect("a full pass under deletions behind and ahead, edits and creates, then an incremental sync: the warehouse equals the service", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      const [backfill] = yield* runner.run({ mode: "backfill" })
      expect(backfill!.outcome).toBe("synced")
      expect(deleted.length).toBeGreaterThanOrEqual(15)
      const [sync] = yield* runner.run({ mode: "sync" })
      expect(sync!.outcome).toBe("synced")
      // 0 live rows missing, 0 live rows marked deleted
      yield* expectStreamExact(jobScalarsStream, accountId)
      // every deleted row the warehouse had is marked (those deleted ahead of the pass were never landed)
      const stored = yield* sql<{ id: string; deleted: boolean }>`
        SELECT id, deleted_at IS NOT NULL AS deleted FROM jobs WHERE account_id = ${accountId} AND id IN ${sql.in(deleted)}`
      expect(stored.length).toBeGreaterThanOrEqual(12)
      expect(stored.filter((r) => !r.deleted)).toEqual([])
      // the pass saw the list move and checked itself: its cost of being exact is on record
      const [run] = yield* sql<{ overhead_points: number; cost_points: number; rows_deleted: number }>`
        SELECT overhead_points::int, cost_points::int, rows_deleted FROM sync_runs WHERE account_id = ${accountId} AND kind = 'full'`
      expect(run!.overhead_points).toBeGreaterThan(0)
      expect(run!.rows_deleted).toBe(stored.length)
    })
  )
})

/**
 * A proxy that hides one job from every page and listing of the connection while `hiding` is set, in place of it the
 * job before it again (pages keep their length: a short page would end the pass), but not from a lookup by id: a
 * row a pass misses, as if the service had lost it for a while.
 */
let hiding: string | undefined
const hidingProxy = serviceProxy({
  after: ({ operationName, variables, answer }) => {
    const lookup = (variables.filter as { ids?: unknown } | null)?.ids !== undefined
    if (hiding === undefined || (operationName !== "JobsPage" && operationName !== "JobsIds") || lookup) return answer
    const json = JSON.parse(answer)
    const nodes: Array<{ id: string }> = json.data.jobs.nodes
    json.data.jobs.nodes = nodes.map((n, i) => (n.id === hiding ? nodes[i - 1] ?? nodes[i + 1] : n))
    return JSON.stringify(json)
  }
})

layer(syncHarness({ accounts: 1, jobs: 400, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } }, { serviceUrl: hidingProxy }), {
  timeout: 120_000,
  excludeTestServices: true
})("the sweep confirms before it marks", (it) => {
  it.effect("a row a full pass did not see is re-read by id before the sweep: alive, it is landed and counted, not marked deleted", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      yield* runner.run({ mode: "backfill" })
      hiding = (yield* admin.listRecords({ accountId, collection: "jobs" }))[123]!.id
      const [again] = yield* runner.run({ mode: "backfill", restart: true })
      hiding = undefined
      expect(again!.outcome).toBe("synced")
      expect(again!.streams[0]!.counts.rowsConfirmed).toBe(1)
      expect(again!.streams[0]!.counts.rowsDeleted).toBe(0)
      yield* expectStreamExact(jobScalarsStream, accountId)
      const [run] = yield* sql<{ rows_confirmed: number }>`SELECT rows_confirmed FROM sync_runs WHERE account_id = ${accountId} ORDER BY id DESC LIMIT 1`
      expect(run!.rows_confirmed).toBe(1)
    })
  )
})

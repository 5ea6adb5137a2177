import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectedColumnValue, storedColumnValue } from "../../../../src/demo/exactness.js"
import { EventConsumer } from "../../../../src/changes/EventConsumer.js"
import { invoicesStream } from "../../../../src/sync/streams/invoices.js"
import { jobsStream } from "../../../../src/sync/streams/jobs.js"
import type { AnyStream } from "../../../../src/sync/streams/Stream.js"
import { SyncRunner } from "../../../../src/run/SyncRunner.js"
import { connectAccount } from "../../../support/connector.js"
import { TestEmulator } from "../../../support/emulator.js"
import { queueEvents } from "../../../support/events.js"
import { syncHarness } from "../../../support/syncHarness.js"

// History through the real program (SYNC_HISTORY, as the settings give it) against the emulator's own change log:
// every version the service had while the connector kept up is a version in `<table>_history`, column by column.
const harness = syncHarness(
  { accounts: 1, jobs: 30, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } },
  { env: { SYNC_STREAMS: "jobs,invoices", SYNC_HISTORY: "jobs,invoices", SYNC_EXCLUDE_FIELDS: "" } }
)

type Row = Record<string, unknown>

const historyOf = (stream: AnyStream, accountId: string, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT * FROM ${sql(`${stream.table}_history`)} WHERE account_id = ${accountId} AND id = ${id} ORDER BY valid_from`
  )

/** A version's tracked values: every mapped column but updated_at (a change of nothing kept is no new version). */
const trackedValues = (stream: AnyStream, record: Row) =>
  JSON.stringify(stream.columns.filter((c) => c.column !== "updated_at").map((c) => expectedColumnValue(c, record)))

/**
 * The record's versions in the warehouse are exactly the service's `serviceVersions` (each a listed record) that
 * changed a kept column (one that changed only line items or fields not kept is none): same count, each starting at
 * the record's updatedAt, every mapped column equal, each ended by the next (updated) and the last open, or ended as
 * deleted when `deleted`.
 */
const expectVersionsExact = (stream: AnyStream, accountId: string, id: string, serviceVersions: ReadonlyArray<Row>, deleted = false) =>
  Effect.gen(function* () {
    const versions = serviceVersions.filter((v, k) => k === 0 || trackedValues(stream, v) !== trackedValues(stream, serviceVersions[k - 1]!))
    const stored = yield* historyOf(stream, accountId, id)
    expect(stored.map((r) => (r.valid_from as Date).toISOString()), `${stream.name} ${id}: versions`).toEqual(
      versions.map((v) => new Date(String(v.updatedAt)).toISOString())
    )
    stored.forEach((row, k) => {
      const got = Object.fromEntries(stream.columns.map((c) => [c.column, storedColumnValue(c, row)]))
      const want = Object.fromEntries(stream.columns.map((c) => [c.column, expectedColumnValue(c, versions[k]!)]))
      expect(got, `${stream.name} ${id}: version ${k + 1}`).toEqual(want)
      const last = k === stored.length - 1
      expect(row.ended_by, `${stream.name} ${id}: version ${k + 1} ended by`).toBe(last ? (deleted ? "deleted" : null) : "updated")
      if (!last) expect((row.valid_to as Date).getTime()).toBe((stored[k + 1]!.valid_from as Date).getTime())
    })
  })

/** The emulator's change log of a record: every version it had (its last, again, at a destroy: not a new version). */
const serviceVersions = (collection: string, accountId: string, id: string) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const log = yield* admin.recordVersions({ accountId, collection, id })
    return { versions: log.filter((v) => v.kind !== "destroy").map((v) => v.record as Row), destroyed: log.some((v) => v.kind === "destroy") }
  })

layer(harness, { timeout: 90_000, excludeTestServices: true })("history mode against the service's change log", (it) => {
  it.effect("backfill, incremental passes, change events (replayed and out of order), line item edits and deletions: exact", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const runner = yield* SyncRunner
      const consumer = yield* EventConsumer
      yield* connectAccount(accountId)
      expect((yield* runner.run({ mode: "backfill" }))[0]!.outcome).toBe("synced")

      // the backfill: one open version per live row, equal to it
      const jobs = yield* admin.listRecords({ accountId, collection: "jobs" })
      const [counts] = yield* sql<{ versions: number; open: number }>`
        SELECT count(*)::int AS versions, count(*) FILTER (WHERE valid_to IS NULL)::int AS open FROM jobs_history WHERE account_id = ${accountId}`
      expect(counts).toEqual({ versions: jobs.length, open: jobs.length })
      for (const j of jobs.slice(0, 5)) yield* expectVersionsExact(jobsStream, accountId, j.id, [j])

      const [a, b, c] = jobs.map((j) => j.id)
      const tick = admin.advanceClock({ seconds: 2 })
      // two edits, each read by the next sync (jobs: incremental by update time)
      for (const seed of [1, 2]) {
        yield* tick
        yield* admin.editRecords({ accountId, collection: "jobs", ids: [a!], seed })
        const [run] = yield* runner.run({ mode: "sync" })
        expect(run!.streams.find((s) => s.stream === "jobs")).toMatchObject({ kind: "incremental", outcome: "succeeded" })
      }
      yield* expectVersionsExact(jobsStream, accountId, a!, (yield* serviceVersions("jobs", accountId, a!)).versions)

      // an edit reaching us by events: delivered three times, and an older update of the job arriving after them
      yield* tick
      yield* admin.editRecords({ accountId, collection: "jobs", ids: [a!], seed: 3 })
      const updatedAt = String((yield* admin.listRecords({ accountId, collection: "jobs" })).find((j) => j.id === a)!.updatedAt)
      const update = { topic: "JOB_UPDATE", itemId: a!, occurredAt: updatedAt }
      yield* queueEvents(accountId, [update, update, update, { ...update, occurredAt: "2020-01-01T00:00:00Z" }])
      expect(yield* consumer.drain(accountId)).toMatchObject({ outcome: "drained", failed: 0 })
      yield* expectVersionsExact(jobsStream, accountId, a!, (yield* serviceVersions("jobs", accountId, a!)).versions)
      // and once more, drained again: nothing new
      yield* queueEvents(accountId, [update])
      yield* consumer.drain(accountId)
      expect(yield* historyOf(jobsStream, accountId, a!)).toHaveLength((yield* serviceVersions("jobs", accountId, a!)).versions.length)

      // line items: one removed, one added, one edited; the job's update event brings them
      yield* tick
      const itemsBefore = ((jobs.find((j) => j.id === b)!.lineItems as ReadonlyArray<{ id: string }>) ?? []).map((i) => i.id)
      yield* admin.editLineItems({ accountId, collection: "jobs", ids: [b!], add: 1, remove: 1, edit: 1, seed: 5 })
      const jobB = (yield* admin.listRecords({ accountId, collection: "jobs" })).find((j) => j.id === b)!
      yield* queueEvents(accountId, [{ topic: "JOB_UPDATE", itemId: b!, occurredAt: String(jobB.updatedAt) }])
      expect(yield* consumer.drain(accountId)).toMatchObject({ outcome: "drained", failed: 0 })
      yield* expectVersionsExact(jobsStream, accountId, b!, (yield* serviceVersions("jobs", accountId, b!)).versions)
      const itemsAfter = (jobB.lineItems as ReadonlyArray<Row & { id: string }>).map((i) => i.id)
      const removed = itemsBefore.filter((id) => !itemsAfter.includes(id))
      expect(removed).toHaveLength(1)
      const items = yield* sql<{ id: string; open: boolean; ended_by: string | null }>`
        SELECT id, valid_to IS NULL AS open, ended_by FROM job_line_items_history WHERE account_id = ${accountId} AND job_id = ${b!} ORDER BY id, valid_from`
      // each of the job's line items now has an open version equal to the service's; the removed one's ended as deleted
      const child = jobsStream.children[0]!
      for (const item of jobB.lineItems as ReadonlyArray<Row & { id: string }>) {
        const [open] = yield* sql<Row>`SELECT * FROM job_line_items_history WHERE account_id = ${accountId} AND id = ${item.id} AND valid_to IS NULL`
        expect(Object.fromEntries(child.columns.map((c) => [c.column, storedColumnValue(c, open!)])), `line item ${item.id}`).toEqual(
          Object.fromEntries(child.columns.map((c) => [c.column, expectedColumnValue(c, item)]))
        )
      }
      expect(items.filter((i) => i.id === removed[0]).map((i) => i.ended_by)).toEqual(["deleted"])
      expect(items.filter((i) => i.open).map((i) => i.id).sort()).toEqual([...itemsAfter].sort())

      // deleted with an event, and deleted silently (the next full pass finds it gone): each last version ends as deleted
      yield* tick
      yield* admin.deleteRecords({ accountId, collection: "jobs", ids: [a!, c!] })
      yield* queueEvents(accountId, [{ topic: "JOB_DESTROY", itemId: a!, occurredAt: new Date((yield* admin.clock()).nowMs).toISOString() }])
      yield* consumer.drain(accountId)
      expect((yield* runner.run({ mode: "backfill" }))[0]!.outcome).toBe("synced")
      for (const id of [a!, c!]) {
        const { destroyed, versions } = yield* serviceVersions("jobs", accountId, id)
        expect(destroyed).toBe(true)
        yield* expectVersionsExact(jobsStream, accountId, id, versions, true)
      }
      // and the backfill's full pass wrote nothing for the rows it found unchanged: one version per job, and a's
      // three edits (b's line item edit changed none of the job's own columns: no version of the job)
      const [after] = yield* sql<{ versions: number }>`SELECT count(*)::int AS versions FROM jobs_history WHERE account_id = ${accountId}`
      expect(after!.versions).toBe(jobs.length + 3)

      // invoices keep theirs too (filtered by updatedAt): an edit read by the next sync is one more version
      const invoice = (yield* admin.listRecords({ accountId, collection: "invoices" }))[0]!
      yield* tick
      yield* admin.editRecords({ accountId, collection: "invoices", ids: [invoice.id], seed: 9 })
      yield* runner.run({ mode: "sync" })
      yield* expectVersionsExact(invoicesStream, accountId, invoice.id, (yield* serviceVersions("invoices", accountId, invoice.id)).versions)
    })
  )
})

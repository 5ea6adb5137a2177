import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fullPassesOnly } from "../../../src/sync/pass/Incremental.js"
import { type AccountReport, SyncRunner } from "../../../src/run/SyncRunner.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import type { AnyStream } from "../../../src/sync/streams/Stream.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectAccountExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

// Every stream of the account, with links, line items and custom fields: SYNC_STREAMS and SYNC_EXCLUDE_FIELDS empty.
// A full pass is due after an hour: a test makes one due by moving last_full_pass_at back, as time passing would.
const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "", SYNC_FULL_PASS_EVERY: "1 hour" }

/** The streams by incremental strategy: an updatedAt filter, newest-first (jobs), none (full passes only). */
const fullPassOnly = allStreams.filter((s) => s.incremental === fullPassesOnly)
const incremental = allStreams.filter((s) => s.incremental !== fullPassesOnly)
/** Collections whose records have line items of their own (a visit's are its job's: keyed by their parent). */
const withLineItems = allStreams.filter((s) => s.children.some((c) => !c.keyedByParent)).map((s) => s.connection)

interface RowState {
  readonly synced: number
  readonly deleted: number | null
}
/** Every row of the account in every table the streams write: table -> row key -> (synced_at, deleted_at). */
type Snapshot = ReadonlyMap<string, ReadonlyMap<string, RowState>>

const snapshot = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const out = new Map<string, Map<string, RowState>>()
    const read = (table: string, key: string) =>
      Effect.map(
        sql<{ k: string; synced: Date; deleted: Date | null }>`
          SELECT ${sql.literal(key)} AS k, synced_at AS synced, deleted_at AS deleted FROM ${sql(table)} WHERE account_id = ${accountId}`,
        (rows) => out.set(table, new Map(rows.map((r) => [r.k, { synced: r.synced.getTime(), deleted: r.deleted?.getTime() ?? null }])))
      )
    for (const stream of allStreams) {
      yield* read(stream.table, "id")
      // a line item's row: parent/id (unique per table, keyed by parent or not)
      for (const child of stream.children) yield* read(child.table, `${child.parentColumn} || '/' || id`)
    }
    yield* read("custom_fields", "parent_type || '/' || parent_id || '/' || field_key")
    return out as Snapshot
  })

/** Per table, the keys of the rows written (new, or synced_at moved) and of the rows newly marked deleted since `before`. */
const changesSince = (before: Snapshot, after: Snapshot) => {
  const written: Record<string, Array<string>> = {}
  const deleted: Record<string, Array<string>> = {}
  for (const [table, rows] of after) {
    const old = before.get(table)!
    written[table] = [...rows].filter(([k, r]) => old.get(k)?.synced !== r.synced).map(([k]) => k).sort()
    deleted[table] = [...rows].filter(([k, r]) => r.deleted !== null && old.get(k)?.deleted == null).map(([k]) => k).sort()
  }
  return { written, deleted }
}

const parentOf = (key: string) => key.slice(0, key.indexOf("/"))
const streamsOf = (report: AccountReport) => Object.fromEntries(report.streams.map((s) => [s.stream, s]))

/**
 * The stored rows of `stream` that hold data of records `changed` names (stream name -> ids) through its `dependsOn`
 * (a visit's line items are its job's): read again when an incremental pass finds those records changed.
 */
const readAgainWith = (accountId: string, stream: AnyStream, changed: Readonly<Record<string, Iterable<string>>>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = new Set<string>()
    for (const d of stream.dependsOn) {
      const of = [...(changed[d.stream] ?? [])]
      if (of.length === 0) continue
      for (const r of yield* sql<{ id: string }>`SELECT id FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND ${sql(d.column)} IN ${sql.in(of)}`) ids.add(r.id)
    }
    return ids
  })

/** The records of each incremental stream its next pass finds changed: updated at the service since its mark less the overlap (5 minutes). */
const changedForNextIncremental = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { admin } = yield* TestEmulator
    const changed: Record<string, ReadonlyArray<string>> = {}
    for (const s of incremental) {
      const [mark] = yield* sql<{ at: Date }>`SELECT high_water_mark AS at FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${s.name}`
      const since = mark!.at.getTime() - 5 * 60_000
      changed[s.name] = (yield* admin.listRecords({ accountId, collection: s.connection })).filter((r) => Date.parse(String(r.updatedAt)) >= since).map((r) => r.id)
    }
    return changed
  })

/** Makes the account's full pass of `streams` due, as an hour passing would. */
const fullPassDue = (accountId: string, streams: ReadonlyArray<AnyStream>) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE sync_checkpoints SET last_full_pass_at = now() - interval '2 hours'
      WHERE account_id = ${accountId} AND stream IN ${sql.in(streams.map((s) => s.name))}`
  )

layer(syncHarness({ accounts: 2, jobs: 150, limits: { maxPoints: 10_000, restoreRate: 100_000 } }, { env: wholeAccount }), {
  timeout: 180_000,
  excludeTestServices: true
})("the whole account", (it) => {
  it.effect("a backfill of 2 accounts lands every collection exactly: rows, links, line items (also past the inner page) and custom fields", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const [a, b] = accounts.map((x) => x.accountId) as [string, string]
      // parents with more line items than a page's inner page take follow-up queries
      yield* admin.editLineItems({ accountId: a, collection: "invoices", count: 3, add: 45, seed: 11 })
      yield* admin.editLineItems({ accountId: b, collection: "jobs", count: 2, add: 40, seed: 12 })
      for (const accountId of [a, b]) yield* connectAccount(accountId)
      const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
      expect(reports.map((r) => r.outcome)).toEqual(["synced", "synced"])
      for (const r of reports) expect(r.streams.map((s) => [s.stream, s.kind])).toEqual(allStreams.map((s) => [s.name, "full"]))
      for (const accountId of [a, b]) {
        const counts = yield* expectAccountExact(allStreams, accountId)
        expect(counts.jobs).toBe(150)
        for (const stream of allStreams) expect(counts[stream.name], `${stream.name} of ${accountId}`).toBeGreaterThan(0)
      }
      const sql = yield* SqlClient.SqlClient
      const big = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM (SELECT invoice_id FROM invoice_line_items WHERE account_id = ${a} GROUP BY invoice_id HAVING count(*) > 45) t`
      expect(big[0]!.n).toBeGreaterThanOrEqual(3)
      // every kind of custom field landed, with its value
      const kinds = yield* sql<{ kind: string }>`SELECT DISTINCT kind FROM custom_fields WHERE value IS NOT NULL ORDER BY kind`
      expect(kinds.map((k) => k.kind)).toEqual(["CustomFieldArea", "CustomFieldBoolean", "CustomFieldLink", "CustomFieldNumber", "CustomFieldSelect", "CustomFieldText"])
    })
  )

  it.effect("creates and edits land with the next sync, each stream by its strategy; nothing else is rewritten", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const [a, b] = accounts.map((x) => x.accountId) as [string, string]
      const runner = yield* SyncRunner
      // the service's clock moves past the overlap: the changes are newer than anything landed
      yield* admin.advanceClock({ seconds: 600 })
      const before = { a: yield* snapshot(a), b: yield* snapshot(b) }
      const changed: Record<string, Set<string>> = {}
      let seed = 100
      for (const stream of allStreams) {
        const created = (yield* admin.createRecords({ accountId: a, collection: stream.connection, count: 2, seed: ++seed })).ids
        const edited = (yield* admin.editRecords({ accountId: a, collection: stream.connection, count: 3, seed: ++seed })).ids
        changed[stream.name] = new Set([...created, ...edited])
      }
      const lineItemParents: Record<string, ReadonlyArray<string>> = {}
      for (const collection of withLineItems) {
        lineItemParents[collection] = (yield* admin.editLineItems({ accountId: a, collection, count: 2, add: 1, edit: 1, seed: ++seed })).ids
        for (const id of lineItemParents[collection]!) changed[collection]!.add(id)
      }

      // the rows of the other streams that hold data of the records the incremental passes land: read again with them
      const readAgain: Record<string, ReadonlySet<string>> = {}
      const changedForPasses = yield* changedForNextIncremental(a)
      for (const s of fullPassOnly) readAgain[s.name] = yield* readAgainWith(a, s, changedForPasses)

      // the next sync: an incremental pass of every stream that has one; the others wait for their full pass
      const reports = yield* runner.run({ mode: "sync" })
      expect(reports.map((r) => r.outcome)).toEqual(["synced", "synced"])
      const [ra, rb] = reports.map(streamsOf) as [ReturnType<typeof streamsOf>, ReturnType<typeof streamsOf>]
      for (const s of incremental) expect(ra[s.name]!.kind, s.name).toBe("incremental")
      for (const s of fullPassOnly) expect([ra[s.name]!.kind, ra[s.name]!.outcome], s.name).toEqual(["none", "up-to-date"])
      yield* expectAccountExact(incremental, a)

      const sync = changesSince(before.a, yield* snapshot(a))
      for (const s of incremental) {
        // every created and edited record is written (its updatedAt moved), and no other
        expect(sync.written[s.table], s.name).toEqual([...changed[s.name]!].sort())
        // line items are written only under the parents whose line items changed, custom fields only for new records
        for (const c of s.children) {
          const parents = new Set(sync.written[c.table]!.map(parentOf))
          expect([...parents].filter((p) => !lineItemParents[s.name]?.includes(p) && !changed[s.name]!.has(p)), c.table).toEqual([])
        }
      }
      // no pass yet: only rows read again with the records they hold data of are written (those whose data changed)
      for (const s of fullPassOnly) expect(sync.written[s.table]!.filter((id) => !readAgain[s.name]!.has(id)), `${s.name}: no pass yet`).toEqual([])
      // the visits of the jobs whose line items changed are (their line items are their job's)
      const visitsOfItemsChanged = yield* readAgainWith(a, allStreams.find((s) => s.name === "visits")!, { jobs: lineItemParents.jobs! })
      expect(visitsOfItemsChanged.size).toBeGreaterThan(0)
      expect([...visitsOfItemsChanged].filter((id) => !sync.written.visits!.includes(id))).toEqual([])
      for (const key of sync.written.custom_fields!) {
        const [type, parent] = key.split("/") as [string, string]
        const stream = allStreams.find((s) => s.customFields === type)!
        expect(changed[stream.name]!.has(parent), `custom field ${key}`).toBe(true)
      }
      for (const table of Object.keys(sync.deleted)) expect(sync.deleted[table], table).toEqual([])
      // the other account changed nothing: nothing of it is written
      for (const s of allStreams) expect(rb[s.name]!.counts.rowsWritten, `${s.name} of the other account`).toBe(0)
      expect(Object.values(changesSince(before.b, yield* snapshot(b)).written).flat()).toEqual([])

      // a full pass, when due, brings the streams without incremental access, and rewrites only what changed
      yield* fullPassDue(a, fullPassOnly)
      const beforeFull = yield* snapshot(a)
      const again = streamsOf((yield* runner.run({ mode: "sync", accounts: [a] }))[0]!)
      for (const s of fullPassOnly) expect(again[s.name]!.kind, s.name).toBe("full")
      for (const s of incremental) expect([again[s.name]!.kind, again[s.name]!.counts.rowsWritten], s.name).toEqual(["incremental", 0])
      yield* expectAccountExact(allStreams, a)
      const full = changesSince(beforeFull, yield* snapshot(a))
      const sql = yield* SqlClient.SqlClient
      // a visit's line items are its job's: visits of the jobs whose line items changed changed too
      const visitsOfChangedJobs = (yield* sql<{ id: string }>`
        SELECT id FROM visits WHERE account_id = ${a} AND job_id IN ${sql.in(lineItemParents.jobs!)}`).map((r) => r.id)
      for (const s of fullPassOnly) {
        const mayChange = new Set([...changed[s.name]!, ...(s.name === "visits" ? visitsOfChangedJobs : [])])
        expect(full.written[s.table]!.filter((id) => !mayChange.has(id)), `${s.name}: rows written that did not change`).toEqual([])
        // the records created are new rows; an edit may draw the values a record had (a type without updatedAt)
        const created = [...changed[s.name]!].filter((id) => !before.a.get(s.table)!.has(id))
        expect(created.filter((id) => !full.written[s.table]!.includes(id)), s.name).toEqual([])
      }
      for (const s of incremental) expect(full.written[s.table], s.name).toEqual([])
    })
  )

  it.effect("deletions of records and of line items are marked by the next full pass; nothing else is rewritten", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const [a, b] = accounts.map((x) => x.accountId) as [string, string]
      const runner = yield* SyncRunner
      const sql = yield* SqlClient.SqlClient
      yield* admin.advanceClock({ seconds: 600 })
      const deleted: Record<string, ReadonlyArray<string>> = {}
      let seed = 500
      for (const stream of allStreams) deleted[stream.name] = (yield* admin.deleteRecords({ accountId: a, collection: stream.connection, count: 2, seed: ++seed })).ids
      const removedFrom: Record<string, ReadonlyArray<string>> = {}
      for (const collection of withLineItems) removedFrom[collection] = (yield* admin.editLineItems({ accountId: a, collection, count: 3, remove: 1, seed: ++seed })).ids

      // an incremental pass cannot see a deletion: the deleted records are still live, but for rows read again with the
      // records the pass lands (a visit of a job whose line items changed), which a read by id proves gone
      const seenGone: Record<string, ReadonlyArray<string>> = {}
      const changedForPasses = yield* changedForNextIncremental(a)
      for (const s of allStreams) {
        const readAgain = yield* readAgainWith(a, s, changedForPasses)
        seenGone[s.name] = deleted[s.name]!.filter((id) => readAgain.has(id))
      }
      const stillLive = (name: string) => deleted[name]!.filter((id) => !seenGone[name]!.includes(id)).sort()
      const first = yield* runner.run({ mode: "sync", accounts: [a] })
      expect(first[0]!.outcome).toBe("synced")
      for (const s of allStreams) {
        const live = yield* sql<{ id: string }>`
          SELECT id FROM ${sql(s.table)} WHERE account_id = ${a} AND deleted_at IS NULL AND id IN ${sql.in(deleted[s.name]!)}`
        expect(live.map((r) => r.id).sort(), s.name).toEqual(stillLive(s.name))
      }

      // the next full pass marks them, with their line items and custom fields, and the line items removed
      yield* fullPassDue(a, allStreams)
      const before = yield* snapshot(a)
      const beforeB = yield* snapshot(b)
      const reports = yield* runner.run({ mode: "sync" })
      expect(reports.map((r) => r.outcome)).toEqual(["synced", "synced"])
      const [ra, rb] = reports.map(streamsOf) as [ReturnType<typeof streamsOf>, ReturnType<typeof streamsOf>]
      for (const s of allStreams) expect([ra[s.name]!.kind, ra[s.name]!.counts.rowsDeleted], s.name).toEqual(["full", stillLive(s.name).length])
      yield* expectAccountExact(allStreams, a)
      const changes = changesSince(before, yield* snapshot(a))
      for (const s of allStreams) {
        expect(changes.deleted[s.table], s.name).toEqual(stillLive(s.name))
        // (their line items and custom fields are marked with them: expectAccountExact finds none live under them)
      }
      // the line items removed at the service: marked (with their parent's pass), none live
      for (const collection of withLineItems) {
        const stream = allStreams.find((s) => s.name === collection)!
        const child = stream.children[0]!
        const service = new Map((yield* admin.listRecords({ accountId: a, collection })).map((r) => [String(r.id), r]))
        for (const parent of removedFrom[collection]!.filter((p) => service.has(p))) {
          const live = yield* sql<{ id: string }>`
            SELECT id FROM ${sql(child.table)} WHERE account_id = ${a} AND ${sql(child.parentColumn)} = ${parent} AND deleted_at IS NULL`
          const removed = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM ${sql(child.table)} WHERE account_id = ${a} AND ${sql(child.parentColumn)} = ${parent} AND deleted_at IS NOT NULL`
          expect(live.length, `${child.table} of ${parent}`).toBe((service.get(parent)![child.field] as ReadonlyArray<unknown>).length)
          expect(removed[0]!.n, `${child.table} of ${parent}`).toBeGreaterThanOrEqual(1)
        }
      }
      // custom fields of deleted records are marked; a full pass over unchanged rows writes none of them
      for (const key of changes.deleted.custom_fields!) {
        const [type, parent] = key.split("/") as [string, string]
        expect(deleted[allStreams.find((s) => s.customFields === type)!.name], key).toContain(parent)
      }
      const visitsOfChangedJobs = new Set(
        (yield* sql<{ id: string }>`SELECT id FROM visits WHERE account_id = ${a} AND job_id IN ${sql.in(removedFrom.jobs!)}`).map((r) => r.id)
      )
      for (const [table, keys] of Object.entries(changes.written)) {
        // only a visit whose job lost a line item changed (its line items are its job's)
        const unexpected = keys.filter((k) => !((table === "visits" && visitsOfChangedJobs.has(k)) || (table === "visit_line_items" && visitsOfChangedJobs.has(parentOf(k)))))
        expect(unexpected, `${table}: rows written that did not change`).toEqual([])
      }
      // the other account: an incremental pass that writes nothing
      for (const s of allStreams) expect(rb[s.name]!.counts.rowsWritten, `${s.name} of the other account`).toBe(0)
      expect(Object.values(changesSince(beforeB, yield* snapshot(b)).written).flat()).toEqual([])
      yield* expectAccountExact(allStreams, b)
    })
  )
})

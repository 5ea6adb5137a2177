import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import { AuthLayer } from "../../../src/cli/app.js"
import { hash32, pick } from "../../../src/emulator/Prng.js"
import type { RecordDefinition } from "../../../src/emulator/data/RecordDefinition.js"
import { updatedSince } from "../../../src/sync/pass/Incremental.js"
import { ProgressLog } from "../../../src/run/Progress.js"
import { DateTime } from "../../../src/sync/streams/fields.js"
import { define } from "../../../src/sync/streams/Stream.js"
import { makeSyncEngine } from "../../../src/run/SyncEngine.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { StreamSelectionConfig } from "../../../src/sync/StreamSelection.js"
import { SyncSettings, SyncSettingsConfig } from "../../../src/sync/SyncSettings.js"
import { withEnv } from "../../support/config.js"
import { connectAccount, TestEnv } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { expectStreamExact } from "../../support/streamExactness.js"

/*
 * A stream that exists only in this file, over an emulator collection that exists only in this file, synced by the
 * program's own Pager, Warehouse, StreamRun and SyncRunner: nothing under src/ knows about either.
 *
 * The emulator serves a collection at a root field of the schema (its documents are validated against it), and every
 * root field of the subset is taken by a default collection; so the test's collection is a data set of its own,
 * "leads", served at `clients` (type Client) in place of the default clients, through EmulatorOptions.definitions.
 */

/** The emulator side: every client a lead, with names, emails and balances of its own; filterable and sortable by update time. */
const leadsCollection: RecordDefinition = {
  name: "clients",
  scope: "read_clients",
  nodeType: "Client",
  size: () => 45,
  fields: (input) => {
    const first = pick(["Ada", "Bram", "Cleo", "Dario", "Eun-ji", "Fatou"], input.seed, input.index, 11)
    const last = `Lead-${input.index + 1}`
    return {
      firstName: first,
      lastName: last,
      name: `${first} ${last}`,
      isLead: true,
      isCompany: false,
      companyName: null,
      email: `${first.toLowerCase()}.${input.index + 1}@leads.example`,
      balance: (hash32(input.seed, input.index, 12) % 10_000) / 100
    }
  },
  edit: (input, editSeed) => ({ email: `moved.${editSeed}.${input.index}@leads.example`, balance: (hash32(input.seed, input.index, editSeed) % 10_000) / 100 }),
  sortKeys: { UPDATED_AT: "updatedAt" },
  filters: { updatedAt: { kind: "time", field: "updatedAt" }, createdAt: { kind: "time", field: "createdAt" }, isLead: { kind: "equals", field: "isLead" } },
  customFields: ["customFields"]
}

/** The connector side: a definition (its columns, documents and behaviour derived by `define`), incremental by updatedAt. */
const leadsStream = define({
  name: "leads",
  table: "test_leads",
  connection: "clients",
  nodeType: "Client",
  fields: {
    id: Schema.NonEmptyString,
    name: Schema.String,
    firstName: Schema.String,
    lastName: Schema.String,
    isLead: Schema.Boolean,
    email: Schema.NullOr(Schema.String),
    balance: Schema.Number,
    createdAt: DateTime,
    updatedAt: DateTime
  },
  customFields: true,
  fullPass: {},
  incremental: updatedSince((since) => ({ filter: { updatedAt: { after: since } }, sort: { key: "UPDATED_AT", direction: "ASCENDING" } }))
})

/** Its table, created by the test as a migration would. */
const createTable = `
  CREATE TABLE test_leads (
    account_id text NOT NULL,
    id text NOT NULL,
    name text,
    first_name text,
    last_name text,
    is_lead boolean,
    email text,
    balance numeric,
    created_at timestamptz,
    updated_at timestamptz,
    raw jsonb NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    synced_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    PRIMARY KEY (account_id, id)
  )`

/**
 * The program's sync engine and auth services (as cli/app.ts assembles them), configured through the real Config
 * path; only the SyncSettings' stream catalog is this file's: StreamSelectionConfig takes any list of streams.
 */
const settingsWithLeads = Layer.effect(
  SyncSettings,
  Effect.gen(function* () {
    const settings = yield* SyncSettingsConfig
    return { ...settings, streams: yield* StreamSelectionConfig([leadsStream]) }
  })
)

const harness = Layer.unwrapEffect(
  Effect.map(TestEnv({ SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "", SYNC_FULL_PASS_EVERY: "1 hour" }), (env) =>
    makeSyncEngine().pipe(Layer.provideMerge(Layer.mergeAll(ProgressLog, settingsWithLeads)), Layer.provideMerge(AuthLayer), Layer.provide(withEnv(env)))
  )
).pipe(
  Layer.provideMerge(EmulatorTest({ jobs: 30, definitions: [leadsCollection], limits: { maxPoints: 10_000, restoreRate: 100_000 } })),
  Layer.provideMerge(TestDatabaseEnv),
  Layer.provideMerge(Logger.minimumLogLevel(LogLevel.Warning))
)

const syncedAt = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string; synced_at: Date }>`SELECT id, synced_at FROM test_leads WHERE account_id = ${accountId}`, (rows) => new Map(rows.map((r) => [r.id, r.synced_at.getTime()])))
  )

layer(harness, { timeout: 60_000, excludeTestServices: true })("a stream defined only in a test", (it) => {
  it.effect("backfill, incremental after creates and edits (updatedAt filter), deletions by the full pass: each exact", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(createTable)
      // the table the test wrote has exactly the columns the definition derives (the generic check of the migrations)
      const columns = yield* sql<{ name: string }>`
        SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'test_leads' ORDER BY 1`
      expect(columns.map((c) => c.name)).toEqual(
        ["account_id", "id", ...leadsStream.columns.map((c) => c.column), "raw", "first_seen_at", "synced_at", "deleted_at"].sort()
      )
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner

      // backfill: the stream is the run's only one
      const backfill = yield* runner.run({ mode: "backfill" })
      expect(backfill.map((r) => [r.outcome, r.streams.map((s) => [s.stream, s.kind, s.outcome])])).toEqual([["synced", [["leads", "full", "succeeded"]]]])
      expect(yield* expectStreamExact(leadsStream, accountId)).toBe(45)
      const fields = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM custom_fields WHERE parent_type = 'Client' AND deleted_at IS NULL`
      expect(fields[0]!.n).toBeGreaterThan(0)

      // incremental: the rows updated after the mark (minus the overlap), read through the updatedAt filter
      yield* admin.advanceClock({ seconds: 600 })
      const before = yield* syncedAt(accountId)
      const created = (yield* admin.createRecords({ accountId, collection: "clients", count: 2, seed: 7 })).ids
      const edited = (yield* admin.editRecords({ accountId, collection: "clients", count: 3, seed: 8 })).ids
      const [checkpoint] = yield* sql<{ mark: Date }>`SELECT high_water_mark AS mark FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = 'leads'`
      const [incremental] = yield* runner.run({ mode: "sync" })
      const report = incremental!.streams[0]!
      expect([report.kind, report.outcome]).toEqual(["incremental", "succeeded"])
      // it read exactly the rows updated after the mark minus the overlap (5 minutes): the changed ones, and the newest
      // of the backfill again; it wrote only the changed ones
      const since = checkpoint!.mark.getTime() - 5 * 60_000
      const inReach = (yield* admin.listRecords({ accountId, collection: "clients" })).filter((r) => Date.parse(String(r.updatedAt)) > since)
      expect(inReach.length).toBeGreaterThan(5)
      expect([report.counts.rows, report.counts.rowsWritten]).toEqual([inReach.length, 5])
      expect(yield* expectStreamExact(leadsStream, accountId)).toBe(47)
      const after = yield* syncedAt(accountId)
      expect([...after].filter(([id, t]) => before.get(id) !== t).map(([id]) => id).sort()).toEqual([...created, ...edited].sort())

      // deletions: an incremental pass does not see them; the full pass, when due, marks them and their custom fields
      const deleted = (yield* admin.deleteRecords({ accountId, collection: "clients", count: 2, seed: 9 })).ids
      const [blind] = yield* runner.run({ mode: "sync" })
      expect([blind!.streams[0]!.kind, blind!.streams[0]!.counts.rowsDeleted]).toEqual(["incremental", 0])
      yield* sql`UPDATE sync_checkpoints SET last_full_pass_at = now() - interval '2 hours' WHERE account_id = ${accountId} AND stream = 'leads'`
      const [full] = yield* runner.run({ mode: "sync" })
      expect([full!.streams[0]!.kind, full!.streams[0]!.counts.rowsDeleted, full!.streams[0]!.counts.rowsWritten]).toEqual(["full", 2, 0])
      expect(yield* expectStreamExact(leadsStream, accountId)).toBe(45)
      const marked = yield* sql<{ id: string }>`SELECT id FROM test_leads WHERE account_id = ${accountId} AND deleted_at IS NOT NULL ORDER BY id`
      expect(marked.map((r) => r.id)).toEqual([...deleted].sort())
      const runs = yield* sql<{ stream: string; kind: string; outcome: string }>`SELECT stream, kind, outcome FROM sync_runs ORDER BY id`
      expect(runs.map((r) => [r.stream, r.kind, r.outcome])).toEqual([
        ["leads", "full", "succeeded"],
        ["leads", "incremental", "succeeded"],
        ["leads", "incremental", "succeeded"],
        ["leads", "full", "succeeded"]
      ])
    })
  )
})

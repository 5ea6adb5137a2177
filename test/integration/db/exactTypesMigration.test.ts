import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { makeSyncLayer } from "../../../src/cli/app.js"
import { DatabaseLive } from "../../../src/db/Database.js"
import { runMigrations, sqlFileLoader } from "../../../src/db/Migrations.js"
import { ProgressLog } from "../../../src/run/Progress.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import type { AnyStream, Column } from "../../../src/sync/streams/Stream.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { withEnv } from "../../support/config.js"
import { connectAccount, TestEnv } from "../../support/connector.js"
import { TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"
import { expectAccountExact } from "../../support/streamExactness.js"

/** The migration that changes the types; the schema as the version before it left the database is every one below. */
const typesMigration = 16

const tablesOf = (streams: ReadonlyArray<AnyStream>): ReadonlyArray<{ readonly table: string; readonly columns: ReadonlyArray<Column> }> =>
  streams.flatMap((s) => [{ table: s.table, columns: s.columns }, ...s.children])

/** The streams whose tables the migrations below `typesMigration` made: a stream added since has no table there yet. */
const streamsBeforeTypes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const present = new Set(
    (yield* sql<{ t: string }>`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema()`).map((r) => r.t)
  )
  return allStreams.filter((s) => present.has(s.table))
})

const migrateBelow = (id: number) =>
  Migrator.make({})({ loader: Effect.map(sqlFileLoader(), (all) => all.filter(([n]) => n < id)), table: "schema_migrations" })

/**
 * The tables and columns this version's writer needs to coordinate runs (the account leases, a run's heartbeat; the
 * previous version used advisory locks): made for the fill without being recorded as applied, and taken away before
 * the migration run, which then makes them as on any database the previous version left.
 */
const coordinationMigrations = [18, 19]
const withCoordination = <A, E, R>(fill: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const [id, , load] of yield* sqlFileLoader()) {
      // the loader's type leaves a migration's requirements open; ours need only the SqlClient
      if (coordinationMigrations.includes(id)) yield* Effect.flatten(load as Effect.Effect<Effect.Effect<unknown, unknown, SqlClient.SqlClient>>)
    }
    const filled = yield* fill
    yield* sql`DROP TABLE account_leases`
    yield* sql`ALTER TABLE sync_runs DROP COLUMN lease_epoch, DROP COLUMN heartbeat_at`
    yield* sql`DROP INDEX IF EXISTS sync_runs_started`
    return filled
  })

/** Every row of the streams' tables: its key and its raw, so a row lost or changed by the migration shows. */
const rowsOf = (streams: ReadonlyArray<AnyStream>) => Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out = new Map<string, ReadonlyArray<string>>()
  for (const { table } of [...tablesOf(streams), { table: "custom_fields" }]) {
    const rows = yield* sql<{ k: string }>`SELECT md5(t::text) AS k FROM ${sql(table)} t ORDER BY 1`
    out.set(table, rows.map((r) => r.k))
  }
  return out
})

const columnTypes = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ t: string; c: string; type: string }>`
      SELECT table_name AS t, column_name AS c, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema()`,
    (rows) => new Map(rows.map((r) => [`${r.t}.${r.c}`, r.type]))
  )
)

const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }

// the whole account lands in seconds: a bucket well above the service's, the same mechanics
layer(EmulatorTest({ accounts: 1, jobs: 60, limits: { maxPoints: 100_000, restoreRate: 50_000 } }).pipe(Layer.provideMerge(TestDatabaseEnv), Layer.provideMerge(Logger.minimumLogLevel(LogLevel.Warning))), {
  timeout: 120_000,
  excludeTestServices: true
})("the type migration on a database the previous version filled", (it) => {
  it.effect("money becomes numeric exactly as sent, coordinates double precision, no row lost; the next sync finds it exact", () =>
    Effect.gen(function* () {
      const env = yield* TestEnv(wholeAccount)
      const accountId = (yield* TestEmulator).accounts[0]!.accountId
      const database = DatabaseLive.pipe(Layer.provide(withEnv(env)))

      // the schema as the previous version left it, filled by a backfill of every stream
      yield* migrateBelow(typesMigration).pipe(Effect.provide(database))
      const streams = yield* streamsBeforeTypes.pipe(Effect.provide(database))
      expect(streams.map((st) => st.name)).toEqual(expect.arrayContaining(["clients", "jobs", "invoices"]))
      const before = yield* Effect.gen(function* () {
        yield* connectAccount(accountId)
        const [report] = yield* (yield* SyncRunner).run({ mode: "backfill", streams: streams.map((st) => st.name) })
        expect(report!.outcome).toBe("synced")
        const types = yield* columnTypes
        expect(types.get("invoices.amounts_total")).toBe("double precision")
        expect(types.get("clients.billing_address_latitude")).toBe("text")
        return yield* rowsOf(streams)
      }).pipe(withCoordination, Effect.provide(makeSyncLayer({ progress: ProgressLog, database }).pipe(Layer.provide(withEnv(env)))))
      expect([...before.values()].every((rows) => rows.length > 0)).toBe(true)

      // migrate up: the types change in place
      const after = yield* Effect.gen(function* () {
        const applied = yield* runMigrations
        expect(applied.map(([id]) => id)).toContain(typesMigration)
        const sql = yield* SqlClient.SqlClient
        const types = yield* columnTypes
        for (const { table, columns } of tablesOf(streams)) {
          for (const c of columns.filter((c) => c.type === "numeric" || c.type === "double precision")) {
            expect(types.get(`${table}.${c.column}`), `${table}.${c.column}`).toBe(c.type)
          }
          // every row's money is the decimal the service sent (raw), to the last digit
          for (const c of columns.filter((c) => c.type === "numeric")) {
            const [wrong] = yield* sql<{ n: string }>`
              SELECT count(*) AS n FROM ${sql(table)}
              WHERE ${sql(c.column)} IS DISTINCT FROM (raw #>> ${`{${c.path.join(",")}}`})::numeric`
            expect(Number(wrong!.n), `${table}.${c.column}`).toBe(0)
          }
        }
        const [client] = yield* sql<{ lat: number; sent: string }>`
          SELECT billing_address_latitude AS lat, raw #>> '{billingAddress,latitude}' AS sent FROM clients WHERE raw #>> '{billingAddress,latitude}' <> '' LIMIT 1`
        expect(client!.lat).toBe(Number(client!.sent))
        // a sum of money is exact, with no rounding
        const [sum] = yield* sql<{ total: string }>`SELECT sum(amounts_total)::text AS total FROM invoices`
        expect(sum!.total).toMatch(/^\d+(\.\d{1,2})?$/)
        return yield* rowsOf(streams)
      }).pipe(Effect.provide(database))
      // no row lost or added; a row's content changed only in the columns whose type changed
      for (const [table, rows] of before) expect(after.get(table)!.length, table).toBe(rows.length)

      // the current version on the migrated database: nothing to rewrite, and the warehouse equals the service
      yield* Effect.gen(function* () {
        yield* (yield* SyncRunner).run({ mode: "backfill", restart: true })
        yield* expectAccountExact(allStreams, accountId)
      }).pipe(Effect.provide(makeSyncLayer({ progress: ProgressLog }).pipe(Layer.provide(withEnv(env)))))
    })
  )
})

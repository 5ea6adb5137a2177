import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { expect } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { makeDatabaseLayer } from "../../src/db/Database.js"
import { runMigrations } from "../../src/db/Migrations.js"
import { AuthServicesLive } from "../../src/auth/AuthLive.js"
import { ServiceSettings } from "../../src/auth/ServiceSettings.js"
import type { JobRecord } from "../../src/emulator/EmulatorAdmin.js"
import { ProgressLog } from "../../src/sync/Progress.js"
import { sanitizeJson, sanitizeText } from "../../src/sync/sanitize.js"
import { jobsStream } from "../../src/sync/streams/jobs.js"
import { SyncEngineLive } from "../../src/sync/SyncLive.js"
import { defaultSyncSettings, SyncSettings, type SyncSettingsShape } from "../../src/sync/SyncSettings.js"
import { settingsFor } from "./connector.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseLive } from "./database.js"
import { EmulatorTest, type EmulatorTestOptions, TestEmulator } from "./emulator.js"

/** The base URL the connector uses instead of the emulator's own. */
export class ServiceUrl extends Context.Tag("test/sync/ServiceUrl")<ServiceUrl, string>() {}

/**
 * The sync engine wired to a fresh test emulator and a fresh database schema: the real auth services
 * (AccessTokensLive, Connections, ...), the real ServiceClient over Node's HTTP client, real Postgres.
 */
export const syncHarness = (
  options: EmulatorTestOptions,
  sync: Partial<SyncSettingsShape> = {},
  /** Where the connector reaches the service (default: the emulator itself), e.g. a proxy in front of it. */
  serviceUrl?: Layer.Layer<ServiceUrl, never, TestEmulator>,
  /** The database (default: a fresh schema of the test database). */
  database: Layer.Layer<TestDatabase | PgClient.PgClient | SqlClient.SqlClient, unknown> = TestDatabaseLive
) => {
  const settings = Layer.effect(
    ServiceSettings,
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const url = yield* Effect.serviceOption(ServiceUrl)
      return settingsFor(emulator, url._tag === "Some" ? { baseUrl: url.value } : {})
    })
  ).pipe(Layer.provide(serviceUrl ?? Layer.empty))
  const base = Layer.mergeAll(settings, NodeHttpClient.layerUndici).pipe(Layer.provideMerge(EmulatorTest(options)))
  const auth = AuthServicesLive.pipe(Layer.provideMerge(base))
  return SyncEngineLive.pipe(
    // on the embedded database, as the program itself does there: one account at a time, no page fetched ahead
    Layer.provide(
      Layer.mergeAll(ProgressLog, Layer.succeed(SyncSettings, { ...defaultSyncSettings, singleSession: embeddedTestDatabase(), ...sync }))
    ),
    Layer.provideMerge(auth),
    Layer.provideMerge(database),
    Layer.provideMerge(Logger.minimumLogLevel(LogLevel.Warning))
  )
}

/**
 * A fresh, migrated schema on TEST_DATABASE_URL whose connections carry their own `application_name`, so a test
 * can find (and terminate) exactly its connector's sessions among everyone else's on the database.
 */
export const namedTestDatabase = (applicationName: (schema: string) => string) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const url = process.env.TEST_DATABASE_URL
      if (!url) return yield* Effect.dieMessage("namedTestDatabase needs TEST_DATABASE_URL (a real Postgres)")
      const schema = `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`
      const client = makeDatabaseLayer({
        url: Option.some(Redacted.make(url)),
        dataDir: "memory",
        schema,
        maxConnections: 12,
        applicationName: applicationName(schema)
      })
      const lifecycle = Layer.scopedDiscard(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* runMigrations
          yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
        })
      )
      const info = Layer.succeed(TestDatabase, { url, schema, env: { DATABASE_URL: url, DB_SCHEMA: schema } })
      return Layer.mergeAll(info, lifecycle.pipe(Layer.provideMerge(client)))
    })
  )

const timestampColumns = new Set(jobsStream.columns.filter((c) => c.type === "timestamptz").map((c) => c.column))

/** What a live job of the service must look like in `jobs`: every mapped column and `raw`. */
const expectedRow = (job: JobRecord) => {
  const row: Record<string, unknown> = { id: job.id }
  for (const c of jobsStream.columns) {
    const v = job[c.field]
    row[c.column] =
      v === null || v === undefined ? null : timestampColumns.has(c.column) ? Date.parse(v as string) : typeof v === "string" ? sanitizeText(v) : v
  }
  row.raw = sanitizeJson(job)
  return row
}

const byId = (a: { readonly [k: string]: unknown }, b: { readonly [k: string]: unknown }) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0)

/** The warehouse's live rows of the account are exactly the service's jobs: same ids, every column and raw equal. */
export const expectWarehouseExact = (accountId: string) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const sql = yield* SqlClient.SqlClient
    const service = [...(yield* admin.listJobs(accountId))].sort(byId)
    const rows = yield* sql<Record<string, unknown>>`SELECT * FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL`
    const stored = [...rows]
      .map((r) => {
        const out: Record<string, unknown> = { id: r.id }
        for (const c of jobsStream.columns) {
          const v = r[c.column]
          out[c.column] = v instanceof Date ? v.getTime() : v
        }
        out.raw = r.raw
        return out
      })
      .sort(byId)
    expect(stored.length).toBe(service.length)
    const expected = service.map(expectedRow)
    // compare in slices so a mismatch names the job instead of dumping thousands of rows
    for (let i = 0; i < expected.length; i++) {
      if (JSON.stringify(stored[i]) !== JSON.stringify(expected[i])) expect(stored[i]).toEqual(expected[i])
    }
    const duplicates = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (SELECT id FROM jobs WHERE account_id = ${accountId} GROUP BY id HAVING count(*) > 1) d`
    expect(duplicates[0]!.n).toBe(0)
    return service.length
  })

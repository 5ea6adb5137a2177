import { SqlClient } from "@effect/sql"
import { expect, it as plain, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"
import { makeDatabaseLayer } from "../../../src/db/Database.js"
import { startEmbeddedPostgres } from "../../../src/db/EmbeddedPostgres.js"
import { runMigrations, sqlFileLoader } from "../../../src/db/Migrations.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

const configured = process.env.TEST_DATABASE_URL

/** A database of its own (on TEST_DATABASE_URL's server, dropped after; or a fresh embedded one): its `public` is ours to fill. */
const scratchDatabaseUrl = Effect.gen(function* () {
  if (configured === undefined) {
    const embedded = yield* startEmbeddedPostgres({ dataDir: "memory", searchPath: "account_sync" })
    return embedded.url
  }
  const name = `as_scratch_${crypto.randomBytes(4).toString("hex")}`
  const admin = (statement: string) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: configured })
      await client.connect()
      try {
        await client.query(statement)
      } finally {
        await client.end()
      }
    })
  yield* Effect.acquireRelease(admin(`CREATE DATABASE ${name}`), () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
  const url = new URL(configured)
  url.pathname = `/${name}`
  return url.toString()
})

const clientOn = (url: string, schema: string) =>
  makeDatabaseLayer({ url: Option.some(Redacted.make(url)), dataDir: "memory", schema, maxConnections: 2 })

plain.scoped("another tool's public.schema_migrations does not stand in for ours: every migration runs in DB_SCHEMA", () =>
  Effect.gen(function* () {
    const url = yield* scratchDatabaseUrl
    const tablesIn = (schema: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`
      ).pipe(Effect.map((rows) => rows.map((r) => r.table_name)))
    yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe("CREATE TABLE public.schema_migrations (version text PRIMARY KEY)")
      yield* sql.unsafe("INSERT INTO public.schema_migrations VALUES ('20240101000000')")
      expect(yield* tablesIn("public")).toEqual(["schema_migrations"])
      const applied = yield* runMigrations
      expect(applied.map(([id]) => id)).toEqual((yield* sqlFileLoader()).map(([id]) => id))
      expect(yield* tablesIn("account_sync")).toEqual(expect.arrayContaining(["connections", "jobs", "schema_migrations", "sync_runs"]))
      expect(yield* tablesIn("public")).toEqual(["schema_migrations"])
    }).pipe(Effect.provide(clientOn(url, "account_sync")))
  })
)

plain.scoped.skipIf(configured === undefined)(
  "a DATABASE_URL whose options replace the search_path is refused, naming DB_SCHEMA and the fix",
  () =>
    Effect.gen(function* () {
      const url = new URL(yield* scratchDatabaseUrl)
      url.searchParams.set("options", "-c search_path=public")
      const failure = yield* Effect.flip(Layer.build(clientOn(url.toString(), "account_sync")))
      expect(failure.message).toContain(`DB_SCHEMA "account_sync"`)
      expect(failure.message).toContain("search_path")
    })
)

layer(TestDatabaseLive)("migrations", (it) => {
  it.effect("every sql/ file is applied once, in order, into the test file's own schema", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { schema } = yield* TestDatabase
      const files = yield* sqlFileLoader()
      const recorded = yield* sql<{ migration_id: number }>`SELECT migration_id FROM schema_migrations ORDER BY migration_id`
      expect(recorded.map((r) => r.migration_id)).toEqual(files.map(([id]) => id))
      expect(yield* runMigrations).toEqual([])
      const tables = yield* sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`
      const names = tables.map((t) => t.table_name)
      for (const table of ["connections", "oauth_tokens", "oauth_pending", "jobs", "sync_checkpoints", "sync_runs", "webhook_events"]) {
        expect(names).toContain(table)
      }
    })
  )

  it.effect("a transaction that fails leaves nothing behind", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const attempt = sql.withTransaction(
        Effect.zipRight(
          sql`INSERT INTO webhook_events (event_id, topic) VALUES ('tx-check', 'APP_DISCONNECT')`,
          Effect.fail("boom" as const)
        )
      )
      expect(yield* Effect.flip(attempt)).toBe("boom")
      const rows = yield* sql`SELECT 1 FROM webhook_events WHERE event_id = 'tx-check'`
      expect(rows).toHaveLength(0)
    })
  )
})

import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runMigrations, sqlFileLoader } from "../../src/db/Migrations.js"
import { TestDatabase, TestDatabaseLive } from "../support/database.js"

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

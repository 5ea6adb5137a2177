import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { serviceSchema } from "../../../src/api/serviceSchema.js"
import { definedStreams } from "../../../src/sync/streams/index.js"
import type { Column, ColumnType } from "../../../src/sync/streams/Stream.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

/** How information_schema names the column types a stream derives. */
const sqlType: Readonly<Record<ColumnType, string>> = {
  text: "text",
  integer: "integer",
  numeric: "numeric",
  "double precision": "double precision",
  boolean: "boolean",
  timestamptz: "timestamp with time zone",
  jsonb: "jsonb"
}

const bookkeeping = { raw: "jsonb", first_seen_at: "timestamp with time zone", synced_at: "timestamp with time zone", deleted_at: "timestamp with time zone" }

/** The tables every stream writes: its own (account_id, id) and each child's (with its parent column). */
const tables = definedStreams.flatMap((stream) => [
  { name: stream.table, of: stream.name, keys: { account_id: "text", id: "text" }, columns: stream.columns, nodeType: stream.nodeType },
  ...stream.children.map((child) => ({
    name: child.table,
    of: `${stream.name}.${child.field}`,
    keys: { account_id: "text", id: "text", [child.parentColumn]: "text" },
    columns: child.columns,
    nodeType: child.nodeType
  }))
])

const columnsOf = (schema: string, table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ column_name: string; data_type: string; is_nullable: "YES" | "NO"; comment: string | null }>`
    SELECT c.column_name, c.data_type, c.is_nullable, col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) AS comment
    FROM information_schema.columns c WHERE c.table_schema = ${schema} AND c.table_name = ${table} ORDER BY c.column_name`)

// The DDL is a reviewed migration; the columns are derived from each stream's node Schema. They must agree.
layer(TestDatabaseLive)("every stream's table, as migrated, has exactly the stream's columns", (it) => {
  for (const table of tables) {
    it.effect(`${table.of}: table ${table.name}`, () =>
      Effect.gen(function* () {
        const { schema } = yield* TestDatabase
        const rows = yield* columnsOf(schema, table.name)
        const expected: Record<string, string> = { ...table.keys, ...bookkeeping }
        for (const c of table.columns) expected[c.column] = sqlType[c.type]
        expect(Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]))).toEqual(expected)
        // a field the service may leave out (or configuration excludes) must be a nullable column
        const notNull = new Set(rows.filter((r) => r.is_nullable === "NO").map((r) => r.column_name))
        expect(table.columns.filter((c: Column) => notNull.has(c.column)).map((c) => c.column)).toEqual([])
        // for the people who query the warehouse: every column says what it is, in the schema's words where it has them
        expect(rows.filter((r) => !r.comment).map((r) => r.column_name)).toEqual([])
        const byColumn = new Map(rows.map((r) => [r.column_name, r.comment]))
        for (const c of table.columns) if (c.description) expect(byColumn.get(c.column)).toBe(c.description.replace(/\s+/g, " ").trim())
      })
    )
    it.effect(`${table.of}: table ${table.name}_history keeps every version with the same columns`, () =>
      Effect.gen(function* () {
        const { schema } = yield* TestDatabase
        const rows = yield* columnsOf(schema, `${table.name}_history`)
        const expected: Record<string, string> = {
          ...table.keys,
          first_seen_at: "timestamp with time zone",
          valid_from: "timestamp with time zone",
          valid_to: "timestamp with time zone",
          ended_by: "text",
          recorded_at: "timestamp with time zone"
        }
        for (const c of table.columns) expected[c.column] = sqlType[c.type]
        expect(Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]))).toEqual(expected)
        expect(rows.filter((r) => !r.comment).map((r) => r.column_name)).toEqual([])
      })
    )
  }

  it.effect("custom_fields and every stream table carry a table comment from the schema", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { schema } = yield* TestDatabase
      for (const table of [...tables, { name: "custom_fields", nodeType: "CustomFieldUnion" }]) {
        const [row] = yield* sql<{ comment: string | null }>`SELECT obj_description(format('%I.%I', ${schema}::text, ${table.name}::text)::regclass) AS comment`
        expect(row!.comment, table.name).toBeTruthy()
        const description = serviceSchema().getType(table.nodeType)?.description
        if (description && table.name !== "custom_fields") expect(row!.comment).toContain(description.replace(/\s+/g, " ").trim())
      }
    })
  )

  it.effect("the control tables and every one of their columns say what they are", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { schema } = yield* TestDatabase
      for (const table of [
        "connections",
        "sync_runs",
        "sync_checkpoints",
        "sync_pass_seen",
        "webhook_events",
        "oauth_tokens",
        "oauth_pending",
        "token_keys",
        "schema_migrations",
        "stream_freshness",
        "api_versions",
        "account_health",
        "alert_notices",
        "reader_accounts",
        "account_leases"
      ]) {
        const [row] = yield* sql<{ comment: string | null }>`SELECT obj_description(format('%I.%I', ${schema}::text, ${table}::text)::regclass) AS comment`
        expect(row!.comment, table).toBeTruthy()
        const uncommented = (yield* columnsOf(schema, table)).filter((c) => !c.comment).map((c) => c.column_name)
        expect(uncommented, table).toEqual([])
      }
    })
  )

  it.effect("every table and column of the dbt sources (config/dbt/models/sources.yml) exists as migrated", () =>
    Effect.gen(function* () {
      const { schema } = yield* TestDatabase
      const sources = parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../../config/dbt/models/sources.yml"), "utf8")) as {
        sources: Array<{ tables: Array<{ name: string; columns?: Array<{ name: string }> }> }>
      }
      for (const table of sources.sources[0]!.tables) {
        const migrated = (yield* columnsOf(schema, table.name)).map((r) => r.column_name)
        expect(migrated.length, `table ${table.name}`).toBeGreaterThan(0)
        for (const column of table.columns ?? []) expect(migrated, `${table.name}.${column.name}`).toContain(column.name)
      }
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { allStreams } from "../../../src/sync/streams/index.js"
import type { ColumnType } from "../../../src/sync/streams/Stream.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

/** How information_schema names the column types a stream derives. */
const sqlType: Readonly<Record<ColumnType, string>> = {
  text: "text",
  integer: "integer",
  "double precision": "double precision",
  boolean: "boolean",
  timestamptz: "timestamp with time zone",
  jsonb: "jsonb"
}

// The DDL is a reviewed migration; the columns are derived from each stream's node Schema. They must agree.
layer(TestDatabaseLive)("every stream's table, as migrated, has exactly the stream's columns", (it) => {
  for (const stream of allStreams) {
    it.effect(`${stream.name}: table ${stream.table}`, () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { schema } = yield* TestDatabase
        const rows = yield* sql<{ column_name: string; data_type: string; is_nullable: "YES" | "NO" }>`
          SELECT column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = ${schema} AND table_name = ${stream.table} ORDER BY column_name`
        const actual = Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]))
        const expected: Record<string, string> = {
          account_id: "text",
          id: "text",
          raw: "jsonb",
          first_seen_at: "timestamp with time zone",
          synced_at: "timestamp with time zone",
          deleted_at: "timestamp with time zone"
        }
        for (const c of stream.columns) expected[c.column] = sqlType[c.type]
        expect(actual).toEqual(expected)
        // a field the service may leave out must be a nullable column (a NOT NULL one would refuse the row)
        const notNull = new Set(rows.filter((r) => r.is_nullable === "NO").map((r) => r.column_name))
        expect(stream.columns.filter((c) => c.nullable && notNull.has(c.column)).map((c) => c.column)).toEqual([])
      })
    )
  }
})

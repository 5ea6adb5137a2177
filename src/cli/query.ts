import { Args, Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { Console, Effect } from "effect"
import { MigratedDatabaseLive } from "../db/Database.js"
import { alignedTable } from "./table.js"

const statement = Args.text({ name: "sql" }).pipe(Args.withDescription("A read-only SQL statement, e.g. \"SELECT count(*) FROM jobs\""))
const json = Options.boolean("json").pipe(Options.withDescription("Print the rows as JSON"))

const cellText = (value: unknown): string =>
  value === null || value === undefined
    ? ""
    : value instanceof Date
      ? value.toISOString()
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value)

/** Rows as an aligned plain-text table. */
export const rowsTable = (rows: ReadonlyArray<Record<string, unknown>>): string => {
  if (rows.length === 0) return "(no rows)"
  const header = Object.keys(rows[0]!)
  const cells = rows.map((row) => header.map((key) => cellText(row[key]).replace(/\s+/g, " ")))
  return alignedTable([header, ...cells])
}

/** `query`: reads the warehouse (embedded or DATABASE_URL) in a read-only transaction; handy for the embedded one. */
export const queryCommand = Command.make("query", { statement, json }, ({ json, statement }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.withTransaction(
      Effect.zipRight(sql`SET TRANSACTION READ ONLY`, sql.unsafe<Record<string, unknown>>(statement))
    )
    yield* Console.log(json ? JSON.stringify(rows, null, 2) : rowsTable(rows))
  }).pipe(Effect.provide(MigratedDatabaseLive))
).pipe(Command.withDescription("Run a read-only SQL query against the warehouse and print the rows (tables live in DB_SCHEMA)."))

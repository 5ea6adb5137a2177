import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { QueryDatabaseConfig } from "../config.js"
import { checkStatement } from "../db/readOnlyStatement.js"
import { openReadOnlySession } from "../db/ReadOnlySession.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"
import { alignedTable, terminalTableWidth } from "./table.js"

const statement = Args.text({ name: "sql" }).pipe(Args.withDescription("One read-only SQL statement: SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN"))
const json = Options.boolean("json").pipe(Options.withDescription("Print the rows as JSON"))
const csv = Options.boolean("csv").pipe(Options.withDescription("Print the rows as CSV (RFC 4180: a header line, every cell whole)"))
const wide = Options.boolean("wide").pipe(Options.withDescription("Keep every cell whole on a terminal too, however wide"))

const cellText = (value: unknown): string =>
  value === null || value === undefined
    ? ""
    : value instanceof Date
      ? value.toISOString()
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value)

/**
 * Rows as an aligned plain-text table: within `maxWidth` (cells cut), which `query` asks on a terminal; piped into a
 * file or a program every cell is whole ("whole"), since nothing there would show it was cut.
 */
export const rowsTable = (rows: ReadonlyArray<Record<string, unknown>>, maxWidth: number | "whole" = terminalTableWidth()): string => {
  if (rows.length === 0) return "(no rows)"
  const header = Object.keys(rows[0]!)
  const cells = rows.map((row) => header.map((key) => cellText(row[key]).replace(/\s+/g, " ")))
  return alignedTable([header, ...cells], maxWidth === "whole" ? {} : { maxWidth, shrink: header.map((_, i) => i) })
}

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, its quotes doubled. */
const csvField = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)

/** Rows as CSV: a header line, then one line per row, every cell whole (NULL as an empty field); \r\n line ends. */
export const rowsCsv = (rows: ReadonlyArray<Record<string, unknown>>, columns: ReadonlyArray<string>): string =>
  [columns, ...rows.map((row) => columns.map((key) => cellText(row[key])))].map((line) => line.map(csvField).join(",")).join("\r\n")

/**
 * The rows of one read-only statement, and its columns' names (which a statement of no rows has too): refused before it is sent unless Postgres's parser reads it as one statement
 * that only reads (see readOnlyStatement.ts), then run on a session read-only from its start (QUERY_DATABASE_URL,
 * else DATABASE_URL as the schema's query role, else the embedded database) with QUERY_TIMEOUT, as one prepared
 * statement in a read-only transaction that is rolled back, unless a function it reaches may change something
 * (readOnlyCalls.ts). No migration runs.
 */
export const runQueryWithColumns = (statement: string) =>
  Effect.gen(function* () {
    const checked = yield* checkStatement(statement)
    const session = yield* openReadOnlySession(yield* QueryDatabaseConfig)
    const result = yield* session.run(checked)
    return { rows: result.rows, columns: (result.fields ?? []).map((f) => f.name) }
  }).pipe(Effect.scoped)

/** The rows of one read-only statement (see runQueryWithColumns). */
export const runQuery = (statement: string) => Effect.map(runQueryWithColumns(statement), (r) => r.rows)

/** `query`: reads the warehouse (embedded or a real Postgres), read-only; handy for the embedded one. */
export const queryCommand = withHelp(Command.make("query", { statement, json, csv, wide }, ({ csv, json, statement, wide }) =>
  Effect.gen(function* () {
    if (json && csv) return yield* new ExitWith({ code: ExitCodes.usage, message: "query: give one of --json and --csv" })
    const { rows, columns } = yield* runQueryWithColumns(statement).pipe(
      Effect.catchTag("QueryRefused", (refused) => new ExitWith({ code: ExitCodes.usage, message: refused.message }))
    )
    if (csv) return yield* Effect.sync(() => process.stdout.write(`${rowsCsv(rows, columns)}\r\n`))
    yield* Console.log(json ? JSON.stringify(rows, null, 2) : rowsTable(rows, process.stdout.isTTY === true && !wide ? terminalTableWidth() : "whole"))
  })
), {
  purpose: "Run one read-only SQL statement against the warehouse and print the rows; needs only the database.",
  details:
    "The tables live in DB_SCHEMA; QUERY_DATABASE_URL, when set, is the connection used (a read-only role). Anything but one read-only statement is refused (exit 2), as is a call of a volatile function (one that may change something); a statement running longer than QUERY_TIMEOUT (default 60 seconds) is cancelled (exit 1); no migration runs. On a terminal long cells are cut to fit (--wide keeps them whole); piped, every cell is whole; --csv and --json print them for programs.",
  examples: [
    'account-sync query --csv "SELECT * FROM invoices" > invoices.csv',
    'account-sync query "SELECT job_number, title, total FROM jobs ORDER BY total DESC LIMIT 5"',
    'account-sync query --json "SELECT * FROM sync_runs ORDER BY started_at DESC LIMIT 3"'
  ]
})

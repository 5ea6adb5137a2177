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
  return alignedTable([header, ...cells], { maxWidth: terminalTableWidth(), shrink: header.map((_, i) => i) })
}

/**
 * The rows of one read-only statement: refused before it is sent unless Postgres's parser reads it as one statement
 * that only reads (see readOnlyStatement.ts), then run on a session read-only from its start (QUERY_DATABASE_URL,
 * else DATABASE_URL as the schema's query role, else the embedded database) with QUERY_TIMEOUT, as one prepared
 * statement in a read-only transaction that is rolled back, unless a function it reaches may change something
 * (readOnlyCalls.ts). No migration runs.
 */
export const runQuery = (statement: string) =>
  Effect.gen(function* () {
    const checked = yield* checkStatement(statement)
    const session = yield* openReadOnlySession(yield* QueryDatabaseConfig)
    const result = yield* session.run(checked)
    return result.rows
  }).pipe(Effect.scoped)

/** `query`: reads the warehouse (embedded or a real Postgres), read-only; handy for the embedded one. */
export const queryCommand = withHelp(Command.make("query", { statement, json }, ({ json, statement }) =>
  Effect.gen(function* () {
    const rows = yield* runQuery(statement).pipe(
      Effect.catchTag("QueryRefused", (refused) => new ExitWith({ code: ExitCodes.usage, message: refused.message }))
    )
    yield* Console.log(json ? JSON.stringify(rows, null, 2) : rowsTable(rows))
  })
), {
  purpose: "Run one read-only SQL statement against the warehouse and print the rows; needs only the database.",
  details: "The tables live in DB_SCHEMA; QUERY_DATABASE_URL, when set, is the connection used (a read-only role). Anything but one read-only statement is refused (exit 2), as is a call of a volatile function (one that may change something); a statement running longer than QUERY_TIMEOUT (default 60 seconds) is cancelled (exit 1); no migration runs.",
  examples: ['account-sync query "SELECT job_number, title, total FROM jobs ORDER BY total DESC LIMIT 5"', 'account-sync query --json "SELECT * FROM sync_runs ORDER BY started_at DESC LIMIT 3"']
})

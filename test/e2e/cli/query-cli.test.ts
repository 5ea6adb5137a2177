import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { runCli } from "../../support/cli.js"
import { type Env } from "../../support/config.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

/** What the program prints at the default log level (the harness asks for debug logs). */
const quiet = (env: Env) => ({ ...env, LOG_LEVEL: "info" })

layer(TestDatabaseLive, { timeout: 120_000 })("account-sync query (the program)", (it) => {
  it.effect("prints the rows of a SELECT as a table, or as JSON; a refused statement is one line on stderr, exit 2, nothing changed", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO jobs (account_id, id, job_number, title, raw) VALUES ('acct-1', 'job-1', 7, 'Gutter', '{}')`
      const table = yield* runCli(["query", "SELECT id, job_number, title FROM jobs"], quiet(env))
      expect(table).toMatchObject({ code: 0, stdout: "id     job_number  title\njob-1  7           Gutter\n" })
      const json = yield* runCli(["query", "--json", "SELECT id, job_number FROM jobs"], quiet(env))
      expect(JSON.parse(json.stdout)).toEqual([{ id: "job-1", job_number: 7 }])

      const refused = yield* runCli(["query", "--x\rCOMMIT /*\nSELECT */"], quiet(env))
      expect(refused.code).toBe(2)
      expect(refused.stdout).toBe("")
      expect(refused.stderr).toBe(
        "query refused: COMMIT is transaction control (query runs exactly one read-only statement: SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN)\n"
      )
      expect(yield* sql`SELECT id FROM jobs`).toEqual([{ id: "job-1" }])
    })
  )

  it.effect("piped, every cell is whole however long; --csv prints RFC 4180 CSV with its header even for no rows", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const piped = yield* runCli(["query", "SELECT repeat('x', 200) AS long, 1 AS n"], quiet(env))
      expect(piped.stdout.split("\n")[1]).toBe(`${"x".repeat(200)}  1`)
      const csv = yield* runCli(["query", "--csv", `SELECT 'a,b' AS comma, 'say "hi"' AS quote, E'two\\nlines' AS newline, NULL AS none, 2.50::numeric AS n`], quiet(env))
      expect(csv).toMatchObject({ code: 0, stdout: 'comma,quote,newline,none,n\r\n"a,b","say ""hi""","two\nlines",,2.50\r\n' })
      const empty = yield* runCli(["query", "--csv", "SELECT id, title FROM jobs WHERE false"], quiet(env))
      expect(empty.stdout).toBe("id,title\r\n")
      const both = yield* runCli(["query", "--csv", "--json", "SELECT 1"], quiet(env))
      expect(both).toMatchObject({ code: 2, stderr: "query: give one of --json and --csv\n" })
    })
  )

  it.effect("DB_SCHEMA that is a reserved word or a system schema stops it at configuration load: one line saying so, exit 2", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const reserved = yield* runCli(["query", "SELECT 1"], quiet({ ...env, DB_SCHEMA: "select" }))
      expect(reserved.code).toBe(2)
      expect(reserved.stderr).toBe(
        'DB_SCHEMA is invalid (in .env or the environment): "select" is a reserved word in Postgres; choose another schema name (e.g. account_sync)\n'
      )
      const system = yield* runCli(["migrate"], quiet({ ...env, DB_SCHEMA: "pg_catalog" }))
      expect(system.code).toBe(2)
      expect(system.stderr).toBe('DB_SCHEMA is invalid (in .env or the environment): "pg_catalog" is a system schema of Postgres; choose a schema of your own (e.g. account_sync)\n')
    })
  )
})

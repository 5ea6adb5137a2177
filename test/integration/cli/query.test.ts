import { expect, it as plainIt, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { rowsTable, runQuery } from "../../../src/cli/query.js"
import { QueryDatabaseConfig } from "../../../src/config.js"
import { makeDatabaseLayer } from "../../../src/db/Database.js"
import { queryRoleOf } from "../../../src/db/queryRole.js"
import { openReadOnlySession } from "../../../src/db/ReadOnlySession.js"
import { runMigrations } from "../../../src/db/Migrations.js"
import { type Env } from "../../support/config.js"
import { embeddedTestDatabase, freshSchemaName, TestDatabase, TestDatabaseLive } from "../../support/database.js"

const providerOf = (env: Env) => ConfigProvider.fromMap(new Map(Object.entries(env)))
const queryWith = (env: Env) => (statement: string) => runQuery(statement).pipe(Effect.withConfigProvider(providerOf(env)))

const marker = path.join(os.tmpdir(), `query-copy-program-${process.pid}-${Date.now()}`)

/** Statements that try to write, leave the read-only transaction or run a program, and what refuses each. */
const attacks: ReadonlyArray<readonly [string, RegExp]> = [
  ["COMMIT; DELETE FROM jobs", /^query refused: more than one statement/],
  ["ROLLBACK", /^query refused: ROLLBACK is transaction control/],
  ["SET TRANSACTION READ WRITE", /^query refused: SET changes the session/],
  ["BEGIN READ WRITE", /^query refused: BEGIN is transaction control/],
  ["/* hidden */ -- behind comments\n end", /^query refused: COMMIT is transaction control/],
  ["WITH gone AS (DELETE FROM jobs RETURNING id) SELECT count(*) FROM gone", /^query refused: DELETE changes data/],
  ["SELECT id INTO x FROM jobs", /^query refused: SELECT INTO creates a table/],
  [`COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`, /^query refused: COPY reads and writes files and runs programs on the server/],
  // the review's bypass: Postgres ends a -- comment at \r as well as \n
  [`--x\rCOPY (SELECT 1) TO PROGRAM 'touch ${marker}' /*\nSELECT */`, /^query refused: COPY reads and writes files and runs programs on the server/],
  ["--x\rCOMMIT /*\nSELECT */", /^query refused: COMMIT is transaction control/],
  ["SELECT 1; DELETE FROM jobs", /^query refused: more than one statement/],
  ["(SELECT 1); ROLLBACK; CREATE TABLE x()", /^query refused: more than one statement/]
]

/** What any of the attacks could have changed. */
const state = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ jobs: number; x: string | null; publicX: string | null }>`
    SELECT (SELECT count(*)::int FROM jobs) AS jobs, to_regclass('x')::text AS x, to_regclass('public.x')::text AS "publicX"`
  return { ...row!, marker: fs.existsSync(marker) }
})

layer(TestDatabaseLive)("query: one read-only statement", (it) => {
  it.effect("a SELECT reads the rows, printed as an aligned table (or JSON) as before", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO jobs (account_id, id, title, raw) VALUES ('acct-1', 'job-1', 'Fix the   roof', '{"a":1}')`
      const rows = yield* queryWith(env)("SELECT account_id, id, title, raw, job_number FROM jobs ORDER BY id")
      expect(rows).toEqual([{ account_id: "acct-1", id: "job-1", title: "Fix the   roof", raw: { a: 1 }, job_number: null }])
      expect(rowsTable(rows)).toBe(
        ["account_id  id     title         raw      job_number", "acct-1      job-1  Fix the roof  {\"a\":1}"].join("\n")
      )
    })
  )

  it.effect("transaction control, SET, COPY ... PROGRAM, a second statement and writes are refused, and nothing changes", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO jobs (account_id, id, raw) VALUES ('acct-1', 'job-2', '{}')`
      const before = yield* state
      expect(before.jobs).toBeGreaterThan(0)
      for (const [statement, refusal] of attacks) {
        const refused = yield* Effect.flip(queryWith(env)(statement))
        expect(refused._tag, statement).toBe("QueryRefused")
        expect(refused.message, statement).toMatch(refusal)
        expect(yield* state, statement).toEqual(before)
      }
      expect(before.x).toBeNull()
      expect(before.marker).toBe(false)
      // the program's own connections still write (on the embedded database they share the query's session)
      yield* sql`DELETE FROM jobs WHERE id = 'job-2'`
    })
  )

  it.effect.skipIf(embeddedTestDatabase())("the session is read-only from its start (default_transaction_read_only), not only the transaction", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      expect(yield* queryWith(env)("SHOW default_transaction_read_only")).toEqual([{ default_transaction_read_only: "on" }])
      expect(yield* queryWith(env)("SELECT current_setting('transaction_read_only') AS ro")).toEqual([{ ro: "on" }])
    })
  )

  it.effect.skipIf(embeddedTestDatabase())("a connection string whose own options replace the read-only start is refused, naming it", () =>
    Effect.gen(function* () {
      const { env, schema } = yield* TestDatabase
      const url = new URL(env.DATABASE_URL!)
      url.searchParams.set("options", `-c search_path=${schema}`)
      const refused = yield* Effect.flip(queryWith({ ...env, DATABASE_URL: url.toString() })("SELECT 1"))
      expect(refused.message).toBe(
        "query: the session is not read-only: DATABASE_URL's own options replace the default_transaction_read_only=on query starts with (remove options=... from DATABASE_URL)"
      )
    })
  )

  it.scoped.skipIf(embeddedTestDatabase())(
    "without QUERY_DATABASE_URL it cannot signal the connector's sessions nor take locks: the parser refuses, and behind it the query role does",
    () =>
      Effect.gen(function* () {
        const { env, schema } = yield* TestDatabase
        // a session of DATABASE_URL's role (the connector's serve or sync), idle
        const victim = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: env.DATABASE_URL, application_name: `victim ${schema}` })
            client.on("error", () => {})
            await client.connect()
            return client
          }),
          (client) => Effect.promise(() => client.end().catch(() => {}))
        )
        const alive = Effect.promise(() => victim.query("SELECT 1 AS one").then(() => true, () => false))
        const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'victim ${schema}'`
        const lock = `SELECT pg_advisory_lock(hashtext('account-sync:${schema}'), hashtext('acct-1')) IS NULL AS locked`
        for (const statement of [terminate, lock, `SELECT set_config('role', current_user, false), (${terminate}) IS NULL`]) {
          const refused = yield* Effect.flip(queryWith(env)(statement))
          expect(refused._tag, statement).toBe("QueryRefused")
        }
        expect(yield* alive).toBe(true)

        // the last wall, the parser and the catalog's judgement left out (no names to judge): the statement runs as
        // the schema's query role, which may not signal
        const session = yield* openReadOnlySession(yield* QueryDatabaseConfig.pipe(Effect.withConfigProvider(providerOf(env))))
        expect(session.role).toBe(queryRoleOf(schema))
        const denied = yield* Effect.flip(session.run({ text: terminate, names: [] }))
        expect(denied._tag).toBe("SqlError")
        expect(denied._tag === "SqlError" && (denied.cause as { code?: string }).code).toBe("42501")
        expect(yield* alive).toBe(true)
      })
  )

  it.effect("query runs no migration and creates nothing: a schema it names stays absent", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const fresh = freshSchemaName()
      const exists = `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = '${fresh}'`
      expect(yield* queryWith({ ...env, DB_SCHEMA: fresh })(exists)).toEqual([{ n: 0 }])
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql.unsafe(exists)).toEqual([{ n: 0 }])
    })
  )
})

plainIt.scoped(
  "on the embedded database under DATA_DIR (opened read-only by query), a write is refused and the data stays",
  () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "query-embedded-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const schema = freshSchemaName()
      const database = makeDatabaseLayer({ url: Option.none(), dataDir, schema })
      const count = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`)
      yield* Effect.gen(function* () {
        yield* runMigrations
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO jobs (account_id, id, raw) VALUES ('acct-1', 'job-1', '{}')`
      }).pipe(Effect.provide(Layer.fresh(database)))
      const query = queryWith({ DATA_DIR: dataDir, DB_SCHEMA: schema })
      expect(yield* query("SELECT id FROM jobs")).toEqual([{ id: "job-1" }])
      expect(yield* query("SHOW default_transaction_read_only")).toEqual([{ default_transaction_read_only: "on" }])
      for (const [statement, refusal] of attacks.filter(([s]) => s.startsWith("WITH") || s.startsWith("SELECT 1;"))) {
        expect((yield* Effect.flip(query(statement))).message, statement).toMatch(refusal)
      }
      expect(yield* count.pipe(Effect.provide(Layer.fresh(database)))).toEqual([{ n: 1 }])
    }),
  180_000
)

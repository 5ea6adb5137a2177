import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect } from "effect"
import { runQuery } from "../../../src/cli/query.js"
import { exampleQueries } from "../../../src/demo/Demo.js"
import { type Env } from "../../support/config.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseLive } from "../../support/database.js"
import { readmeQueries } from "../../support/readmeQueries.js"

const queryWith = (env: Env) => (statement: string) =>
  runQuery(statement).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

/** The 2026-11-28 security review's spellings (findings 3 and 4): each ran through `query` on main. */
const reviewSpellings: ReadonlyArray<string> = [
  "SELECT (x).pg_advisory_lock FROM (SELECT 42::bigint AS x) s",
  "SELECT (k).pg_advisory_lock AS locked, pg_sleep(45) AS slept FROM (SELECT ('x' || encode(sha224((current_database() || '.pgboss.q_queue')::bytea), 'hex'))::bit(64)::bigint AS k) s",
  "SELECT (x).pg_terminate_backend FROM (SELECT pg_backend_pid() AS x) s",
  "SELECT (x).pg_cancel_backend FROM (SELECT pg_backend_pid() AS x) s",
  "SELECT (x).lo_unlink FROM (SELECT 0::oid AS x) s",
  "SELECT (x).pg_read_file FROM (SELECT 'postgresql.conf'::text AS x) s",
  "SELECT pg_sleep(0.1) AS slept",
  "SELECT pg_sleep_for('0.1 seconds')",
  "SELECT pg_sleep_until(now())"
]

layer(TestDatabaseLive)("query: the functions a statement reaches, and its time", (it) => {
  it.effect("refuses every spelling of the review and every other way to reach a volatile function: by attribute, operator, cast", () =>
    Effect.gen(function* () {
      const { env, schema } = yield* TestDatabase
      const sql = yield* SqlClient.SqlClient
      // what an owner of the schema may define: volatile functions reached by attribute notation, an operator, a cast
      yield* sql.unsafe(`CREATE FUNCTION ${schema}.bump(bigint) RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT $1 + 1'`)
      yield* sql.unsafe(`CREATE FUNCTION ${schema}.bump2(bigint, bigint) RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT $1 + $2'`)
      yield* sql.unsafe(`CREATE OPERATOR ${schema}.### (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = ${schema}.bump2)`)
      yield* sql.unsafe(`CREATE TYPE ${schema}.boxed AS (n bigint)`)
      yield* sql.unsafe(`CREATE FUNCTION ${schema}.boxed_of(bigint) RETURNS ${schema}.boxed LANGUAGE sql VOLATILE AS 'SELECT ROW($1)::${schema}.boxed'`)
      yield* sql.unsafe(`CREATE CAST (bigint AS ${schema}.boxed) WITH FUNCTION ${schema}.boxed_of(bigint)`)
      // Postgres resolves attribute notation on an expression as a call: the statement is what it looks like it is not
      expect(yield* sql.unsafe(`SELECT (x).bump AS b FROM (SELECT 41::bigint AS x) s`)).toEqual([{ b: "42" }])

      const refused = (statement: string) =>
        Effect.gen(function* () {
          const refusal = yield* Effect.flip(queryWith(env)(statement))
          expect(refusal._tag, statement).toBe("QueryRefused")
          return refusal.message
        })
      for (const statement of reviewSpellings) yield* refused(statement)
      expect(yield* refused("SELECT (x).pg_advisory_lock FROM (SELECT 42::bigint AS x) s")).toMatch(
        /^query refused: pg_advisory_lock names a function with effects beyond reading/
      )
      expect(yield* refused("SELECT pg_sleep(0.1) AS slept")).toMatch(/^query refused: pg_sleep\(\) is volatile \(Postgres lets it change things\)/)
      expect(yield* refused("SELECT (x).bump FROM (SELECT 41::bigint AS x) s")).toMatch(/^query refused: bump\(\) is volatile/)
      expect(yield* refused(`SELECT (x).abs.bump FROM (SELECT -41::bigint AS x) s`)).toMatch(/^query refused: bump\(\) is volatile/)
      expect(yield* refused(`SELECT BuMp(1)`)).toMatch(/^query refused: bump\(\) is volatile/)
      expect(yield* refused(`SELECT ${schema}.bump(1)`)).toMatch(/^query refused: bump\(\) is volatile/)
      expect(yield* refused("SELECT 1::bigint ### 2::bigint")).toMatch(/^query refused: the operator ### calls bump2\(\), which is volatile/)
      expect(yield* refused(`SELECT 1 OPERATOR(${schema}.###) 2`)).toMatch(/^query refused: the operator ### calls bump2\(\)/)
      expect(yield* refused("SELECT 1::bigint::boxed")).toMatch(/^query refused: a cast to .*boxed calls boxed_of\(\), which is volatile/)
      expect(yield* refused("SELECT setseed(0.5)")).toMatch(/^query refused: setseed\(\) is volatile/)
    })
  )

  it.effect("allows the README's and the demo's queries, and reads that call immutable, stable and the read-only volatile functions", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      for (const statement of [...readmeQueries(), ...exampleQueries.map((query) => query.sql)]) {
        yield* queryWith(env)(statement).pipe(Effect.orDieWith((error) => new Error(`${statement}: ${error.message}`)))
      }
      const rows = yield* queryWith(env)(
        `SELECT (x).abs AS attribute, random() < 1 AS random, clock_timestamp() IS NOT NULL AS clock, pg_total_relation_size('jobs') >= 0 AS size,
                'jobs'::regclass::text AS cast, (SELECT count(*) FROM jobs WHERE title LIKE 'x%' AND updated_at BETWEEN now() - interval '1 day' AND now()) AS n,
                (SELECT count(*) FROM jobs TABLESAMPLE bernoulli (10)) AS sampled
           FROM (SELECT -1 AS x) s`
      )
      expect(rows).toEqual([{ attribute: 1, random: true, clock: true, size: true, cast: "jobs", n: "0", sampled: "0" }])
    })
  )

  it.effect.skipIf(embeddedTestDatabase())("a statement longer than QUERY_TIMEOUT is cancelled with one line naming it; the session's timeouts are QUERY_TIMEOUT's (60 s unset)", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      expect(yield* queryWith(env)("SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle")).toEqual([
        { statement: "1min", idle: "1min" }
      ])
      // 2 s: long enough that a loaded machine's session setup and a trivial read never reach it
      const short = queryWith({ ...env, QUERY_TIMEOUT: "2 seconds" })
      expect(yield* short("SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle")).toEqual([
        { statement: "2s", idle: "2s" }
      ])
      // no pg_sleep (refused): a long read, as any statement that runs too long
      const timedOut = yield* Effect.flip(short("SELECT count(*) FROM generate_series(1, 10000000000) AS n"))
      expect(timedOut._tag).toBe("QueryTimedOut")
      expect(timedOut.message).toBe(
        `query: the statement ran longer than QUERY_TIMEOUT (2 s), and Postgres cancelled it; set QUERY_TIMEOUT (e.g. QUERY_TIMEOUT="10 minutes") to give it longer`
      )
    })
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkStatement } from "../../../src/db/readOnlyStatement.js"
import { exampleQueries } from "../../../src/demo/Demo.js"
import { readmeQueries } from "../../support/readmeQueries.js"

/** Why `statement` is refused before it reaches the database, or undefined. */
const refusalOf = (statement: string) =>
  checkStatement(statement).pipe(Effect.match({ onFailure: (refused) => refused, onSuccess: () => undefined }))

/** The bypasses of the 2026-11-24 security review (findings 1 and 7), as they were typed. */
const reviewBypasses: ReadonlyArray<string> = [
  "--x\rCOPY (SELECT 1) TO PROGRAM 'id > /tmp/proof' /*\nSELECT */",
  "--x\rCOMMIT /*\nSELECT */",
  "--x\rSET SESSION AUTHORIZATION secrev_app /*\nSELECT */",
  "SELECT pg_advisory_lock(hashtext('account-sync:account_sync'), hashtext('Z2lk')) IS NULL AS locked, pg_sleep(25) IS NULL AS slept",
  "SELECT current_user, pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'victim'",
  "SELECT pg_create_physical_replication_slot('secrev_slot', true)",
  "SELECT pg_switch_wal(), pg_stat_reset(), pg_reload_conf(), pg_notify('secrev','x'), pg_current_xact_id()",
  "SELECT public.dblink_exec('host=127.0.0.1 dbname=x user=postgres', 'DELETE FROM account_sync.canary WHERE x = 1')",
  "SELECT set_config('default_transaction_read_only','off',false)",
  "SELECT lo_import('/etc/passwd')",
  "COMMIT; COPY (select 1) TO PROGRAM 'id'",
  "COPY (select 1) TO PROGRAM 'id'"
]

/** At least 50 more: each hides a write, a second statement, a session change or a side effect somewhere. */
const hostile: ReadonlyArray<string> = [
  // comments that end where a naive reader does not think
  "-- x\rDELETE FROM jobs",
  "--\r\nDELETE FROM jobs",
  "/* a /* nested */ comment */ DELETE FROM jobs",
  "/* /* */ SELECT 1 */ DROP TABLE jobs",
  "/**/DELETE/**/FROM/**/jobs",
  "-- SELECT\nUPDATE jobs SET title = 'x'",
  "SELECT 1 /* ; */ ; DELETE FROM jobs",
  "SELECT 1 -- ;\n; DELETE FROM jobs",
  "\u2028DELETE FROM jobs",
  "\tTRUNCATE jobs",
  // a second statement behind quoting
  "SELECT 'a'';'; DELETE FROM jobs",
  "SELECT $$;$$; DELETE FROM jobs",
  "SELECT $tag$ $$ ; $tag$; DROP TABLE jobs",
  "SELECT E'\\''; DELETE FROM jobs --'",
  "SELECT E'\\\\'; DELETE FROM jobs",
  "SELECT U&'\\0027'; DELETE FROM jobs",
  "SELECT U&\"a\"\"b\" FROM jobs; DELETE FROM jobs",
  "SELECT 1;\rDELETE FROM jobs",
  "SELECT 1;;DELETE FROM jobs",
  "(SELECT 1); ROLLBACK; CREATE TABLE x()",
  // transaction control and session changes
  "COMMIT",
  "END",
  "ROLLBACK",
  "ABORT",
  "BEGIN READ WRITE",
  "START TRANSACTION READ WRITE",
  "SAVEPOINT s",
  "PREPARE TRANSACTION 'x'",
  "SET ROLE postgres",
  "RESET ROLE",
  "SET SESSION AUTHORIZATION postgres",
  "SET TRANSACTION READ WRITE",
  "RESET ALL",
  "DISCARD ALL",
  "LOAD 'plpgsql'",
  "LISTEN x",
  "NOTIFY x, 'y'",
  // writes, DDL, programs
  "DELETE FROM jobs",
  "INSERT INTO jobs (account_id, id, raw) VALUES ('a', 'b', '{}')",
  "UPDATE jobs SET title = 'x'",
  "MERGE INTO jobs j USING clients c ON false WHEN NOT MATCHED THEN DO NOTHING",
  "TRUNCATE jobs",
  "DROP TABLE jobs",
  "CREATE TEMP TABLE t AS SELECT 1",
  "ALTER TABLE jobs DISABLE ROW LEVEL SECURITY",
  "GRANT SELECT ON jobs TO public",
  "COPY jobs TO '/tmp/jobs'",
  "COPY jobs FROM PROGRAM 'id'",
  "DO $$ BEGIN PERFORM pg_sleep(0); END $$",
  "CALL p()",
  "LOCK TABLE jobs",
  "VACUUM jobs",
  "ANALYZE jobs",
  "REFRESH MATERIALIZED VIEW v",
  "CLUSTER jobs",
  "REINDEX TABLE jobs",
  "CHECKPOINT",
  "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
  "EXECUTE p",
  "PREPARE p AS DELETE FROM jobs",
  "SECURITY LABEL ON TABLE jobs IS 'x'",
  "COMMENT ON TABLE jobs IS 'x'",
  "IMPORT FOREIGN SCHEMA s FROM SERVER x INTO y",
  // reads that write, lock or create
  "WITH gone AS (DELETE FROM jobs RETURNING id) SELECT count(*) FROM gone",
  "WITH a AS (SELECT 1), b AS (UPDATE jobs SET title = 't' RETURNING 1) SELECT * FROM a",
  "WITH x AS (INSERT INTO jobs (account_id, id, raw) VALUES ('a','b','{}') RETURNING 1) TABLE x",
  "SELECT id INTO x FROM jobs",
  "SELECT * INTO TEMP t1 FROM jobs",
  "SELECT * FROM jobs FOR UPDATE",
  "SELECT * FROM jobs FOR SHARE SKIP LOCKED",
  "SELECT * FROM (SELECT * FROM jobs FOR KEY SHARE) j",
  "EXPLAIN ANALYZE DELETE FROM jobs",
  "EXPLAIN (ANALYZE) WITH d AS (DELETE FROM jobs RETURNING 1) SELECT * FROM d",
  "EXPLAIN ANALYZE SELECT pg_terminate_backend(1)",
  // side effects through functions, however they are spelled or wherever they sit
  "SELECT pg_catalog.pg_advisory_lock(1)",
  "SELECT PG_ADVISORY_XACT_LOCK(1)",
  "SELECT \"pg_try_advisory_lock\"(1)",
  "SELECT U&\"pg\\005ftry\\005fadvisory\\005flock\"(1)",
  "SELECT * FROM pg_advisory_lock_shared(1)",
  "SELECT * FROM jobs, LATERAL pg_cancel_backend(1) c",
  "SELECT 1 WHERE pg_terminate_backend(1)",
  "SELECT (SELECT pg_reload_conf())",
  "SELECT count(*) FILTER (WHERE pg_advisory_lock(1) IS NULL) FROM jobs",
  "SELECT 1 ORDER BY pg_advisory_lock(1)",
  "VALUES (pg_advisory_lock(1))",
  "SELECT CASE WHEN true THEN pg_notify('c', 'm') END",
  "SELECT s.pg_terminate_backend FROM (SELECT 1) s",
  // attribute notation on an expression is a call too (the 2026-11-28 review's finding 3), however it is nested
  "SELECT (x).pg_advisory_lock FROM (SELECT 42::bigint AS x) s",
  "SELECT ((s.x)).\"pg_advisory_lock\" FROM (SELECT 42::bigint AS x) s",
  "SELECT (x).abs.pg_advisory_lock FROM (SELECT -42::bigint AS x) s",
  "SELECT (x).pg_terminate_backend, (x).pg_cancel_backend FROM (SELECT 1 AS x) s",
  "SELECT (x).lo_unlink FROM (SELECT 0::oid AS x) s",
  "SELECT (x).pg_read_file FROM (SELECT '/etc/passwd'::text AS x) s",
  "SELECT 1 FROM jobs WHERE (jobs.id).pg_advisory_lock IS NULL",
  "SELECT pg_read_file('/etc/passwd')",
  "SELECT pg_read_binary_file('/etc/passwd')",
  "SELECT pg_ls_dir('.')",
  "SELECT lo_export(1, '/tmp/x')",
  "SELECT lo_from_bytea(0, 'x')",
  "SELECT dblink('dbname=x', 'SELECT 1')",
  "SELECT dblink_connect('x')",
  "SELECT pg_create_logical_replication_slot('s', 'pgoutput')",
  "SELECT pg_drop_replication_slot('s')",
  "SELECT pg_replication_origin_create('o')",
  "SELECT pg_logical_emit_message(true, 'p', 'm')",
  "SELECT pg_stat_reset_shared('bgwriter')",
  "SELECT pg_rotate_logfile()",
  "SELECT pg_backup_start('x')",
  "SELECT nextval('s')",
  "SELECT setval('s', 1)",
  "SELECT query_to_xml('SELECT pg_terminate_backend(1)', true, true, '')",
  "SELECT ts_stat('SELECT pg_advisory_lock(1)')",
  "SELECT pg_signal_backend(1, 15)",
  "SELECT brin_summarize_new_values('i')",
  "SHOW ALL; SELECT pg_advisory_lock(1)",
  // nothing, or not SQL
  "",
  "   ",
  "-- only a comment",
  "/* unterminated comment",
  "SELECT 'unterminated",
  "SELECT 1\u0000; DELETE FROM jobs"
]

describe("query's statement guard: Postgres's own parser", () => {
  it.effect("refuses every bypass of the review and every hostile statement of the corpus", () =>
    Effect.gen(function* () {
      expect(hostile.length).toBeGreaterThanOrEqual(50)
      for (const statement of [...reviewBypasses, ...hostile]) {
        const refusal = yield* refusalOf(statement)
        expect(refusal?._tag, JSON.stringify(statement)).toBe("QueryRefused")
        expect(refusal?.message, JSON.stringify(statement)).toMatch(/^query refused: /)
      }
    })
  )

  it.effect("says why, naming the statement kind or the function", () =>
    Effect.gen(function* () {
      const reasonOf = (statement: string) => Effect.map(refusalOf(statement), (refusal) => refusal?.reason)
      expect(yield* reasonOf(reviewBypasses[0]!)).toBe("COPY reads and writes files and runs programs on the server")
      expect(yield* reasonOf("--x\rCOMMIT /*\nSELECT */")).toBe("COMMIT is transaction control")
      expect(yield* reasonOf("SET ROLE postgres")).toBe("SET changes the session")
      expect(yield* reasonOf("SELECT 1; DELETE FROM jobs")).toBe("more than one statement")
      expect(yield* reasonOf("SELECT pg_catalog.pg_terminate_backend(1)")).toBe("pg_terminate_backend() has effects beyond reading")
      expect(yield* reasonOf("WITH d AS (DELETE FROM jobs RETURNING 1) SELECT 1")).toBe("DELETE changes data (a data-modifying WITH included)")
      expect(yield* reasonOf("TRUNCATE jobs")).toBe("TRUNCATE is not a read-only statement")
      expect(yield* reasonOf("")).toBe("no statement given")
      expect(yield* reasonOf("SELEC 1")).toMatch(/^not a statement Postgres can parse: syntax error at or near "SELEC"/)
    })
  )

  it.effect("allows the README's example queries (and the demo's), and plain reads", () =>
    Effect.gen(function* () {
      const examples = readmeQueries()
      expect(examples.length).toBeGreaterThanOrEqual(3)
      const reads = [
        ...examples,
        ...exampleQueries.map((query) => query.sql),
        "SELECT job_number, title, updated_at FROM jobs LIMIT 5",
        "SELECT count(*) FROM jobs",
        "TABLE jobs",
        "VALUES (1), (2)",
        "SHOW search_path",
        "EXPLAIN SELECT * FROM jobs",
        "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM jobs",
        "WITH recent AS (SELECT * FROM jobs ORDER BY updated_at DESC LIMIT 10) SELECT * FROM recent;",
        "-- a comment\r\nSELECT 'it''s; fine', $$ ; DELETE $$, E'\\n' /* ; */",
        "SELECT lo, pg_sleep(0), current_setting('search_path') FROM (SELECT 1 AS lo) s"
      ]
      for (const statement of reads) expect(yield* refusalOf(statement), statement).toBeUndefined()
    })
  )
})

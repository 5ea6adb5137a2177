import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import pg from "pg"
import { AccessTokens, recheckAfterMs } from "../../../src/auth/AccessTokens.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { namedTestDatabase, pagesToRead, syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

const appName = (schema: string) => `account-sync-${schema}`

// pg_terminate_backend needs a real Postgres, and a pool named after this file's schema so that only this test's
// connector sessions are terminated, not those of other test files sharing the database.
describe.skipIf(!process.env.TEST_DATABASE_URL)("connection loss", () => {
  layer(
    syncHarness({ accounts: 1, jobs: 2000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }, { database: namedTestDatabase(appName) }),
    { timeout: 120_000, excludeTestServices: true }
  )("terminated Postgres sessions", (it) => {
    it.effect("every connector session terminated mid-page (pg_terminate_backend): the page is retried, the run succeeds exact", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        const sql = yield* SqlClient.SqlClient
        const { schema } = yield* TestDatabase
        yield* connectAccount(accountId)
        // the 3rd page's checkpoint update pauses (a sequence: the retry, after the rollback, does not pause again),
        // so the sessions are terminated while a page transaction is open
        yield* sql.unsafe(`
          CREATE SEQUENCE pause_once;
          CREATE FUNCTION pause_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF nextval('pause_once') = 3 THEN PERFORM pg_sleep(30); END IF;
            RETURN NEW;
          END $$;
          CREATE TRIGGER pause_checkpoint BEFORE UPDATE ON sync_checkpoints FOR EACH ROW EXECUTE FUNCTION pause_checkpoint();`)

        const run = yield* Effect.fork((yield* SyncRunner).run({ mode: "backfill" }))
        let paused = 0
        for (let i = 0; i < 400 && paused === 0; i++) {
          yield* Effect.sleep("25 millis")
          const rows = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE application_name = ${appName(schema)} AND wait_event = 'PgSleep' AND datname = current_database()`
          paused = rows[0]!.n
        }
        expect(paused).toBe(1)
        // let the page fetched ahead settle, then terminate every session of the connector's pool but this query's
        yield* Effect.sleep("300 millis")
        const terminated = yield* sql<{ n: number }>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE application_name = ${appName(schema)} AND pid <> pg_backend_pid() AND datname = current_database()`
        // at least the paused page transaction and the session holding the account's advisory lock
        expect(terminated[0]!.n).toBeGreaterThanOrEqual(2)

        const reports = yield* Fiber.join(run)
        expect(reports.map((r) => [r.outcome, r.message])).toEqual([["synced", undefined]])
        expect(reports[0]!.streams[0]!.counts.rows).toBe(2000)
        expect(reports[0]!.streams[0]!.counts.pages).toBe(pagesToRead(2000, 100))
        expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(2000)
        const runs = yield* sql<{ outcome: string; pages: number; rows: number }>`
          SELECT outcome, pages, rows FROM sync_runs WHERE account_id = ${accountId}`
        expect(runs).toEqual([{ outcome: "succeeded", pages: pagesToRead(2000, 100), rows: 2000 }])
        const [checkpoint] = yield* sql<{ pass_kind: string | null; last_full_pass_at: Date | null }>`
          SELECT pass_kind, last_full_pass_at FROM sync_checkpoints WHERE account_id = ${accountId}`
        expect(checkpoint!.pass_kind).toBeNull()
        expect(checkpoint!.last_full_pass_at).not.toBeNull()
      })
    )

    it.effect("a token read whose session is terminated while it waits is read again on a new session", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        const { url, schema } = yield* TestDatabase
        const tokens = yield* AccessTokens
        const known = yield* tokens.get(accountId)
        // past the time a token is served from memory: the next get reads the database
        yield* Effect.sleep(recheckAfterMs + 50)
        // a session outside the connector's pool locks `connections`, so the connector's read waits behind it
        const locker = new pg.Client({ connectionString: url })
        yield* Effect.promise(() => locker.connect())
        yield* Effect.addFinalizer(() => Effect.promise(() => locker.end()).pipe(Effect.ignore))
        yield* Effect.promise(() => locker.query(`BEGIN; LOCK TABLE ${schema}.connections IN ACCESS EXCLUSIVE MODE`))
        const reading = yield* Effect.fork(tokens.get(accountId))
        let terminated = 0
        for (let i = 0; i < 100 && terminated === 0; i++) {
          yield* Effect.sleep("20 millis")
          const { rows } = yield* Effect.promise(() =>
            locker.query<{ n: number }>(
              `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
               WHERE application_name = $1 AND wait_event_type = 'Lock' AND datname = current_database()`,
              [appName(schema)]
            )
          )
          terminated = rows[0]!.n
        }
        yield* Effect.promise(() => locker.query("ROLLBACK"))
        expect(terminated).toBe(1)
        expect(Redacted.value(yield* Fiber.join(reading))).toBe(Redacted.value(known))
      }).pipe(Effect.scoped)
    )
  })
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { spawnCli } from "../../support/cli.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { embeddedTestDatabase, TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

// 3,000 jobs, every GraphQL answer 100 ms late: a backfill of about 30 pages; A's 4th page is held in its
// transaction while the session renewing its lease is killed and a second backfill takes the account.
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 100_000, restoreRate: 100_000 } }), {
  timeout: 180_000,
  excludeTestServices: true
})("the account's lease lost with its session", (it) => {
  it.scoped.skipIf(embeddedTestDatabase())(
    "a backfill whose lease session is terminated under a running page: the next holder waits for that page, then the first writes nothing more",
    () =>
      Effect.gen(function* () {
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        const sql = yield* SqlClient.SqlClient
        const { schema, url } = yield* TestDatabase
        yield* connectAccount(accountId)
        // leases renewed every 200 s: A does not move its lease to a new session before B takes it
        const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings), LOG_LEVEL: "warn", ACCOUNT_LEASE_SECONDS: "600" }

        // every write of the pass moves its checkpoint: the log says which process wrote, in the order they did; A's
        // 4th page waits (inside its page statement, after its lease check) for the test's go
        const gate = 424_242
        yield* sql.unsafe(`
          CREATE TABLE write_log (n serial PRIMARY KEY, writer text NOT NULL, position int);
          CREATE SEQUENCE pages_of_a;
          CREATE FUNCTION log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            IF current_setting('application_name') LIKE '% writer-a' AND nextval('${schema}.pages_of_a') = 4 THEN
              PERFORM pg_advisory_xact_lock(${gate});
            END IF;
            INSERT INTO ${schema}.write_log (writer, position) VALUES (current_setting('application_name'), NEW.position);
            RETURN NEW; END $$;
          CREATE TRIGGER log_write BEFORE UPDATE ON sync_checkpoints FOR EACH ROW WHEN (NEW.position IS DISTINCT FROM OLD.position)
            EXECUTE FUNCTION log_write()`)
        const gateKeeper = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: url })
            await client.connect()
            await client.query(`SELECT pg_advisory_lock(${gate})`)
            return client
          }),
          (client) => Effect.promise(() => client.end())
        )
        const writesOf = (writer: string) =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM write_log WHERE writer = ${writer}`, (r) => r[0]!.n)
        const sessionsOf = (name: string, where: string) =>
          Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
              WHERE s.application_name = ${name} AND ${sql.literal(where)}`,
            (r) => r[0]!.n
          )
        yield* admin.setFaults({ latencyRate: 1, latencyMs: 100, seed: 7 })
        yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))

        const a = `${schema} writer-a`
        const b = `${schema} writer-b`
        const first = yield* spawnCli(["backfill", "--restart", "--stream", "jobs"], { ...env, DATABASE_APPLICATION_NAME: a })
        const waitFor = (what: Effect.Effect<boolean, unknown>) =>
          Effect.gen(function* () {
            for (let i = 0; i < 600 && !(yield* what); i++) yield* Effect.sleep("50 millis")
            return yield* what
          })
        // A's 4th page is running: it checked its lease and now waits in its transaction
        expect(yield* waitFor(Effect.map(sessionsOf(a, `NOT l.granted AND l.objid = ${gate}`), (n) => n === 1))).toBe(true)
        expect(yield* writesOf(a)).toBe(3)

        // the idle session renewing A's lease dies (as by idle_session_timeout or a dropped connection): the lease is free
        const killed = yield* sql<{ pid: number }>`
          SELECT holder_pid AS pid, pg_terminate_backend(holder_pid) FROM account_leases WHERE account_id = ${accountId} AND holder LIKE ${`${a} %`}`
        expect(killed).toHaveLength(1)
        // another process takes the account: its bump of the epoch waits for A's page in flight, which then goes on
        const second = yield* spawnCli(["backfill", "--stream", "jobs"], { ...env, DATABASE_APPLICATION_NAME: b })
        const waiting = sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${b} AND wait_event_type = 'Lock'`
        expect(yield* waitFor(Effect.map(waiting, (r) => r[0]!.n === 1))).toBe(true)
        yield* Effect.promise(() => gateKeeper.query(`SELECT pg_advisory_unlock(${gate})`))

        const [stopped, done] = yield* Effect.all([first.exit, second.exit], { concurrency: 2 })
        expect(done.code, done.stderr).toBe(0)
        expect(stopped.code, stopped.stderr).toBe(1)
        expect(stopped.stderr).toContain("the account's lease moved to another holder; stopped writing")

        // A wrote, then B, never A again once B had written
        const log = yield* sql<{ writer: string }>`SELECT writer FROM write_log ORDER BY n`
        const writers = log.map((row) => (row.writer === a ? "A" : row.writer === b ? "B" : row.writer))
        const firstOfB = writers.indexOf("B")
        expect(firstOfB).toBeGreaterThan(0)
        expect(writers.slice(firstOfB).filter((w) => w !== "B"), writers.join("")).toEqual([])

        const runs = yield* sql<{ outcome: string; error: string | null; started: Date; finished: Date }>`
          SELECT outcome, error, started_at AS started, finished_at AS finished FROM sync_runs WHERE account_id = ${accountId} ORDER BY id`
        expect(runs.map((r) => r.outcome)).toEqual(["interrupted", "succeeded"])
        expect(runs[0]!.error).toContain("lost the account")
        expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
      })
  )
})

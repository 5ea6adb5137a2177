import { SqlClient, SqlError } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock, TestServices } from "effect"
import { isConnectionLost } from "../../../src/db/connectionRetry.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { Warehouse } from "../../../src/sync/landing/Warehouse.js"
import { embeddedTestDatabase } from "../../support/database.js"
import { job, landed, rowsRead } from "../../support/jobFixtures.js"
import { landPage, TestLayer } from "../../support/warehouseLanding.js"

layer(TestLayer)("Warehouse: the end of a pass, its checkpoint and its transaction", (it) => {
  it.effect("a full pass marks rows it did not see deleted; a row that reappears loses deleted_at", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      const deletedOf = () =>
        sql<{ id: string; deleted: boolean }>`SELECT id, deleted_at IS NOT NULL AS deleted FROM jobs WHERE account_id = 'acc-sweep' ORDER BY job_number`
      yield* checkpoints.begin("acc-sweep", jobsStream, "full")
      yield* landPage("acc-sweep", landed([job(1), job(2)]), { position: 1 })
      yield* landPage("acc-sweep", landed([job(3)]), { position: 2, last: true })
      expect((yield* deletedOf()).map((r) => r.deleted)).toEqual([false, false, false])
      const done = Option.getOrThrow(yield* checkpoints.read("acc-sweep", "jobs"))
      expect(done.passKind).toBeNull()
      expect(done.lastFullPassAt).not.toBeNull()
      expect(done.highWaterMark?.toISOString()).toBe("2025-01-01T00:03:00.000Z")

      // second pass: job 2 is gone; the unchanged jobs 1 and 3 are not rewritten, yet count as seen
      yield* checkpoints.begin("acc-sweep", jobsStream, "full")
      yield* landPage("acc-sweep", landed([job(1)]), { position: 1 })
      const end = yield* landPage("acc-sweep", landed([job(3)]), { position: 2, last: true })
      expect(end).toEqual({ written: 0, deleted: 1 })
      expect((yield* deletedOf()).map((r) => r.deleted)).toEqual([false, true, false])

      yield* checkpoints.begin("acc-sweep", jobsStream, "full")
      const back = yield* landPage("acc-sweep", landed([job(1), job(2), job(3)]), { position: 9, last: true })
      expect(back).toEqual({ written: 1, deleted: 0 })
      expect((yield* deletedOf()).map((r) => r.deleted)).toEqual([false, false, false])
    })
  )

  it.effect("a full pass over an account without live rows records no seen ids; one over an account with rows does", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      const seenCount = () =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_pass_seen WHERE account_id = 'acc-first'`, (r) => r[0]!.n)
      yield* checkpoints.begin("acc-first", jobsStream, "full")
      yield* landPage("acc-first", landed([job(1), job(2)]), { position: 1 })
      expect(yield* seenCount()).toBe(0)
      // resumed after an interruption, it still records none, and its end has nothing to sweep
      expect((yield* checkpoints.begin("acc-first", jobsStream, "full")).resumed).toBe(true)
      expect(yield* landPage("acc-first", landed([job(3)]), { position: 2, last: true })).toEqual({ written: 1, deleted: 0 })

      yield* checkpoints.begin("acc-first", jobsStream, "full")
      yield* landPage("acc-first", landed([job(1), job(3)]), { position: 1 })
      expect(yield* seenCount()).toBe(2)
      expect(yield* landPage("acc-first", landed([]), { last: true })).toEqual({ written: 0, deleted: 1 })
      expect(yield* seenCount()).toBe(0)
    })
  )

  it.effect("a full pass in progress resumes from its position; restart forgets it", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-resume", jobsStream, "full")
      yield* landPage("acc-resume", landed([job(1)]), { position: 1 })
      const resumed = yield* checkpoints.begin("acc-resume", jobsStream, "full")
      expect([resumed.resumed, resumed.checkpoint.position]).toEqual([true, 1])
      const restarted = yield* checkpoints.begin("acc-resume", jobsStream, "full", { restart: true })
      expect([restarted.resumed, restarted.checkpoint.position]).toEqual([false, 0])
    })
  )

  it.effect("an incremental pass moves the high-water mark only when it ends", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-inc", jobsStream, "full")
      yield* landPage("acc-inc", landed([job(1)]), { position: 1, last: true })
      const hwm = () => Effect.map(checkpoints.read("acc-inc", "jobs"), (c) => Option.getOrThrow(c).highWaterMark?.toISOString())
      expect(yield* hwm()).toBe("2025-01-01T00:01:00.000Z")
      yield* checkpoints.begin("acc-inc", jobsStream, "incremental")
      yield* landPage("acc-inc", landed([job(50)]), { position: 1, kind: "incremental" })
      expect(yield* hwm()).toBe("2025-01-01T00:01:00.000Z")
      yield* landPage("acc-inc", landed([job(50), job(2)]), { position: 2, kind: "incremental", last: true })
      expect(yield* hwm()).toBe("2025-01-01T00:50:00.000Z")
    })
  )

  it.effect("what ends a pass with its batch runs in the batch's transaction, and never for a repeat of a batch that committed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      const pass = (position: number) => ({ kind: "incremental" as const, partition: 0, position, anchors: [], shifted: false, highWaterMark: null })
      const batch = (n: number, position: number) => ({ accountId: "acc-after", stream: jobsStream, pages: rowsRead(landed([job(n)])), pass: pass(position) })
      const rows = () => Effect.map(sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = 'acc-after' ORDER BY job_number`, (r) => r.map((x) => x.id))
      yield* checkpoints.begin("acc-after", jobsStream, "incremental")
      // `after` fails: the batch rolls back with it
      const failed = yield* Effect.flip(warehouse.land(batch(1, 1), Effect.fail("refused" as const)))
      expect(failed).toBe("refused")
      expect(yield* rows()).toEqual([])
      expect(Option.getOrThrow(yield* checkpoints.read("acc-after", "jobs")).position).toBe(0)
      // `after` ends the pass with the batch
      let ran = 0
      const end = Effect.zipRight(Effect.sync(() => void ran++), checkpoints.finishIncremental("acc-after", "jobs", null))
      expect(yield* warehouse.land(batch(1, 1), end)).toBe(1)
      expect([ran, Option.getOrThrow(yield* checkpoints.read("acc-after", "jobs")).passKind]).toEqual([1, null])
      // a batch of the pass that ended (a repeat of one whose COMMIT went through, its acknowledgement lost): nothing
      // lands, `after` does not run
      expect(yield* warehouse.land(batch(2, 1), end)).toBe(0)
      expect([ran, yield* rows()]).toEqual([1, [job(1).id]])
    })
  )

  it.effect("a failure between the page's statements leaves neither the page nor its checkpoint", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      // an earlier pass left a row: this pass records the ids it sees
      yield* checkpoints.begin("acc-crash", jobsStream, "full")
      yield* landPage("acc-crash", landed([job(1)]), { position: 0, last: true })
      yield* checkpoints.begin("acc-crash", jobsStream, "full")
      yield* landPage("acc-crash", landed([job(1)]), { position: 1 })
      // the checkpoint statement, which runs after the rows are upserted, fails for this account
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.account_id = 'acc-crash' AND NEW.position = 2 THEN RAISE EXCEPTION 'simulated crash'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_checkpoint BEFORE UPDATE ON sync_checkpoints FOR EACH ROW EXECUTE FUNCTION refuse_checkpoint();`)
      const failed = yield* Effect.flip(landPage("acc-crash", landed([job(2), job(3, { title: "changed" })]), { position: 2 }))
      expect(failed._tag).toBe("SqlError")
      yield* sql.unsafe(`DROP TRIGGER refuse_checkpoint ON sync_checkpoints; DROP FUNCTION refuse_checkpoint();`)
      const rows = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = 'acc-crash'`
      expect(rows.map((r) => r.id)).toEqual([job(1).id])
      const seen = yield* sql<{ id: string }>`SELECT id FROM sync_pass_seen WHERE account_id = 'acc-crash'`
      expect(seen.map((r) => r.id)).toEqual([job(1).id])
      expect(Option.getOrThrow(yield* checkpoints.read("acc-crash", "jobs")).position).toBe(1)
    })
  )

  // pg_terminate_backend needs a real server
  it.effect.skipIf(embeddedTestDatabase())("a connection killed mid-transaction leaves neither the page nor its checkpoint; the page is landed again on a new one", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-kill", jobsStream, "full")
      // the checkpoint statement, after the upsert of the page's rows, pauses, so the session can be terminated between
      // statements
      yield* sql.unsafe(`
        CREATE FUNCTION pause_kill() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.account_id = 'acc-kill' AND NEW.position = 1 THEN PERFORM pg_sleep(30); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER pause_kill AFTER UPDATE ON sync_checkpoints FOR EACH ROW EXECUTE FUNCTION pause_kill();`)
      const landing = yield* Effect.fork(landPage("acc-kill", landed([job(1), job(2)]), { position: 1 }))
      let killed = 0
      for (let i = 0; i < 100 && killed === 0; i++) {
        yield* TestServices.provideLive(Effect.sleep("50 millis"))
        const rows = yield* sql<{ n: number }>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE wait_event = 'PgSleep' AND query LIKE '%UPDATE sync_checkpoints%' AND pid <> pg_backend_pid()`
        killed = rows[0]!.n
      }
      expect(killed).toBe(1)
      yield* sql.unsafe(`DROP TRIGGER pause_kill ON sync_checkpoints; DROP FUNCTION pause_kill();`)
      // the retry waits on the (test) clock: until then, nothing of the killed transaction is there
      expect(yield* sql`SELECT id FROM jobs WHERE account_id = 'acc-kill'`).toEqual([])
      expect(Option.getOrThrow(yield* checkpoints.read("acc-kill", "jobs")).position).toBe(0)
      for (let i = 0; i < 100 && landing.unsafePoll() === null; i++) {
        yield* TestClock.adjust("1 second")
        yield* TestServices.provideLive(Effect.sleep("50 millis"))
      }
      expect(yield* Fiber.join(landing)).toEqual({ written: 2, deleted: 0 })
      const rows = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = 'acc-kill' ORDER BY job_number`
      expect(rows.map((r) => r.id)).toEqual([job(1).id, job(2).id])
      expect(Option.getOrThrow(yield* checkpoints.read("acc-kill", "jobs")).position).toBe(1)
    })
  )

  it("tells a lost connection from an error a retry would repeat", () => {
    const error = (cause: unknown, message = "Failed to execute statement") => new SqlError.SqlError({ cause, message })
    const pgError = (code: string, message: string) => Object.assign(new Error(message), { code })
    expect(isConnectionLost(error(pgError("57P01", "terminating connection due to administrator command")))).toBe(true)
    expect(isConnectionLost(error(pgError("08006", "connection failure")))).toBe(true)
    expect(isConnectionLost(error(pgError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"), "Failed to acquire connection"))).toBe(true)
    expect(isConnectionLost(error(new Error("Connection terminated unexpectedly")))).toBe(true)
    expect(isConnectionLost(error(new Error("Client has encountered a connection error and is not queryable")))).toBe(true)
    expect(isConnectionLost(error(pgError("23505", "duplicate key value violates unique constraint")))).toBe(false)
    expect(isConnectionLost(error(pgError("42601", "syntax error at or near")))).toBe(false)
    expect(isConnectionLost(error(pgError("P0001", "simulated crash")))).toBe(false)
  })
})

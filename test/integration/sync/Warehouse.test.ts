import { SqlClient, SqlError } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock, TestServices } from "effect"
import { isConnectionLost } from "../../../src/db/connectionRetry.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { Checkpoints, CheckpointsLive } from "../../../src/sync/pass/Checkpoints.js"
import { Warehouse, WarehouseLive } from "../../../src/sync/landing/Warehouse.js"
import { finishFullPass } from "../../../src/sync/pass/PassEnd.js"
import { embeddedTestDatabase, TestDatabaseLive } from "../../support/database.js"
import { job, landed, rowsRead } from "../../support/jobFixtures.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

const TestLayer = WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))

/**
 * Lands a page of the pass in progress as the engine does: its rows with the checkpoint at `position`; `last` ends the
 * pass (an incremental one in the same transaction, a full one with its sweep).
 */
const landPage = (
  accountId: string,
  nodes: ReturnType<typeof landed>,
  options: { position?: number; last?: boolean; kind?: "full" | "incremental"; bodies?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function* () {
    const warehouse = yield* Warehouse
    const checkpoints = yield* Checkpoints
    const kind = options.kind ?? "full"
    const highWaterMark = nodes.length > 0 ? nodes.map((n) => n.node.updatedAt as string).sort().at(-1)! : null
    const written = yield* warehouse.land(
      {
        accountId,
        stream: jobsStream,
        // with bodies: a page for each node, landed from its body
        pages: options.bodies ? nodes.map((n, i) => ({ nodes: [n], body: Buffer.from(options.bodies![i]!) })) : rowsRead(nodes),
        pass: { kind, partition: 0, position: options.position ?? 0, anchors: nodes.map((n) => n.node.id), shifted: false, highWaterMark }
      },
      options.last === true && kind === "incremental" ? checkpoints.finishIncremental(accountId, jobsStream.name, highWaterMark) : undefined
    )
    const deleted = options.last === true && kind === "full" ? (yield* finishFullPass(accountId, jobsStream)).deleted : 0
    return { written, deleted }
  })

layer(TestLayer)("Warehouse", (it) => {
  it.effect("lands a page and its cursor together; an unchanged row is not rewritten, a changed one is", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-1", jobsStream, "full")
      const first = yield* landPage("acc-1", landed([job(1), job(2), job(3)]), { position: 1 })
      expect(first).toEqual({ written: 3, deleted: 0 })
      const cp = yield* checkpoints.read("acc-1", "jobs")
      expect(Option.getOrThrow(cp).position).toBe(1)
      const before = yield* sql<{ id: string; xmin: string }>`SELECT id, xmin::text FROM jobs WHERE account_id = 'acc-1' ORDER BY id`

      const again = yield* landPage("acc-1", landed([job(1), job(2, { title: "renamed" }), job(3)]), { position: 2 })
      expect(again.written).toBe(1)
      const after = yield* sql<{ id: string; xmin: string; title: string }>`SELECT id, xmin::text, title FROM jobs WHERE account_id = 'acc-1' ORDER BY id`
      expect(after.map((r) => r.xmin === before.find((b) => b.id === r.id)!.xmin)).toEqual([true, false, true])
      expect(after.map((r) => r.title)).toEqual(["Job 1", "renamed", "Job 3"])
      expect(Option.getOrThrow(yield* checkpoints.read("acc-1", "jobs")).position).toBe(2)

      const row = (yield* sql<Record<string, unknown>>`SELECT * FROM jobs WHERE account_id = 'acc-1' AND id = ${job(1).id}`)[0]!
      expect(row.job_number).toBe(1)
      // money is numeric: the exact decimal the service sent, as Postgres gives it back
      expect(row.total).toBe("101.25")
      expect(row.allow_review_request).toBe(true)
      expect(row.will_client_be_automatically_charged).toBeNull()
      expect((row.start_at as Date).toISOString()).toBe("2025-01-02T09:00:00.000Z")
      expect(row.raw).toEqual(job(1))
    })
  )

  it.effect("keeps rows with NUL characters: U+FFFD in columns, spelled \\u0000 in raw", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-nul", jobsStream, "full")
      const nasty = job(7, { title: "before\u0000after", instructions: "x\u0000", defaultVisitTitle: "lone \uD800 surrogate" })
      expect(yield* landPage("acc-nul", landed([nasty]), { position: 1 })).toEqual({ written: 1, deleted: 0 })
      const [row] = yield* sql<{ title: string; instructions: string; default_visit_title: string; raw: Record<string, unknown> }>`
        SELECT title, instructions, default_visit_title, raw FROM jobs WHERE account_id = 'acc-nul'`
      expect(row!.title).toBe("before\uFFFDafter")
      expect(row!.instructions).toBe("x\uFFFD")
      expect(row!.default_visit_title).toBe("lone \uFFFD surrogate")
      expect(row!.raw.title).toBe("before\\u0000after")
      // landing it again changes nothing: the comparison is made on the stored (sanitized) form
      expect((yield* landPage("acc-nul", landed([nasty]), { position: 1 })).written).toBe(0)
    })
  )

  it.effect("rows landed from the response bodies equal rows landed from serialized nodes; a body with a NUL escape takes the node path; a repeated id lands once, as last read", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      const bodyOf = (...nodes: ReadonlyArray<Record<string, unknown>>) => JSON.stringify({ data: { jobs: { nodes, pageInfo: { hasNextPage: true, endCursor: "x" } } }, extensions: {} })
      const rowsOf = (account: string) =>
        sql<Record<string, unknown>>`SELECT * FROM jobs WHERE account_id = ${account} ORDER BY id`.pipe(
          Effect.map((rows) => rows.map(({ account_id: _, synced_at: __, first_seen_at: ___, ...row }) => row))
        )
      const nodes = landed([job(1), job(2, { title: null, total: 12.5 })])
      for (const account of ["acc-bodies", "acc-nodes"]) yield* checkpoints.begin(account, jobsStream, "full")
      const viaBodies = yield* landPage("acc-bodies", nodes, { position: 2 , bodies: [bodyOf(job(1)), bodyOf(job(2, { title: null, total: 12.5 }))] })
      const viaNodes = yield* landPage("acc-nodes", nodes, { position: 2 })
      expect(viaBodies).toEqual({ written: 2, deleted: 0 })
      expect(viaNodes).toEqual(viaBodies)
      expect(yield* rowsOf("acc-bodies")).toEqual(yield* rowsOf("acc-nodes"))
      expect((yield* rowsOf("acc-bodies")).map((r) => r.raw)).toEqual([job(1), job(2, { title: null, total: 12.5 })])

      // Postgres refuses \u0000 in jsonb: such a page is sanitized node by node instead
      const nasty = job(7, { title: "before\u0000after" })
      yield* checkpoints.begin("acc-bodies-nul", jobsStream, "full")
      yield* landPage("acc-bodies-nul", landed([nasty]), { position: 1 , bodies: [bodyOf(nasty)] })
      expect((yield* rowsOf("acc-bodies-nul"))[0]!.title).toBe("before\uFFFDafter")

      // the same id twice (a repeat across two pages of a batch): one row, the later node
      yield* checkpoints.begin("acc-bodies-dup", jobsStream, "full")
      const twice = landed([job(3), job(3, { title: "seen again" })])
      const result = yield* landPage("acc-bodies-dup", twice, { position: 1 , bodies: [bodyOf(job(3)), bodyOf(job(3, { title: "seen again" }))] })
      expect(result.written).toBe(1)
      expect((yield* rowsOf("acc-bodies-dup")).map((r) => r.title)).toEqual(["seen again"])

      // an id in three pages, another in two (pages from bodies and from nodes), and a page that repeats an id
      // itself: each id lands once, as last read, in both the stream with line items and the one without
      for (const stream of [jobsStream, jobScalarsStream]) {
        const account = `acc-repeats-${stream.children.length}`
        yield* checkpoints.begin(account, stream, "full")
        const pass = { kind: "full" as const, partition: 0, position: 3, anchors: [], shifted: false, highWaterMark: null }
        const read = (n: number, title: string) => job(n, { title })
        const across = yield* warehouse.land({
          accountId: account,
          stream,
          pages: [
            { nodes: landed([read(10, "1st"), read(11, "1st")]), body: Buffer.from(bodyOf(read(10, "1st"), read(11, "1st"))) },
            { nodes: landed([read(11, "2nd"), read(10, "2nd")]), body: undefined },
            { nodes: landed([read(10, "3rd"), read(12, "3rd")]), body: Buffer.from(bodyOf(read(10, "3rd"), read(12, "3rd"))) }
          ],
          pass
        })
        expect(across).toBe(3)
        const within = yield* warehouse.land({
          accountId: account,
          stream,
          pages: [{ nodes: landed([read(13, "first"), read(13, "second")]), body: Buffer.from(bodyOf(read(13, "first"), read(13, "second"))) }],
          pass: { ...pass, position: 4 }
        })
        expect(within).toBe(1)
        expect((yield* rowsOf(account)).map((r) => [r.id, r.title])).toEqual([
          [job(10).id, "3rd"],
          [job(11).id, "2nd"],
          [job(12).id, "3rd"],
          [job(13).id, "second"]
        ])
      }

      // a batch of a page that lands from its body (its nodes kept as the pager keeps them: id and updatedAt only), a
      // page without a body that needs sanitizing, and a plain one: every row whole, each raw from its own page
      yield* checkpoints.begin("acc-mixed", jobsStream, "full")
      const slim = (n: ReturnType<typeof job>) => {
        const kept = { id: n.id, updatedAt: n.updatedAt }
        return { node: kept, raw: kept }
      }
      const withNul = job(5, { title: "nul\u0000here" })
      yield* warehouse.land({
        accountId: "acc-mixed",
        stream: jobsStream,
        pages: [
          { nodes: [slim(job(4)), slim(job(6))], body: Buffer.from(bodyOf(job(4), job(6))) },
          { nodes: landed([withNul]), body: undefined },
          { nodes: landed([job(8)]), body: undefined }
        ],
        pass: { kind: "full", partition: 0, position: 4, anchors: [], shifted: false, highWaterMark: null }
      })
      const mixed = yield* rowsOf("acc-mixed")
      expect(mixed.map((r) => [r.id, r.title])).toEqual([
        [job(4).id, job(4).title],
        [job(5).id, "nul\uFFFDhere"],
        [job(6).id, job(6).title],
        [job(8).id, job(8).title]
      ])
      expect(mixed.map((r) => r.raw)).toEqual([job(4), { ...withNul, title: "nul\\u0000here" }, job(6), job(8)])
    })
  )

  it.effect("the same job id in two accounts is two rows", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      for (const account of ["acc-a", "acc-b"]) {
        yield* checkpoints.begin(account, jobsStream, "full")
        yield* landPage(account, landed([job(42, { title: `in ${account}` })]), { position: 1 })
      }
      const rows = yield* sql<{ account_id: string; title: string }>`
        SELECT account_id, title FROM jobs WHERE id = ${job(42).id} ORDER BY account_id`
      expect(rows).toEqual([{ account_id: "acc-a", title: "in acc-a" }, { account_id: "acc-b", title: "in acc-b" }])
    })
  )

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

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { Warehouse } from "../../../src/sync/landing/Warehouse.js"
import { job, landed } from "../../support/jobFixtures.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { landPage, TestLayer } from "../../support/warehouseLanding.js"

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
})

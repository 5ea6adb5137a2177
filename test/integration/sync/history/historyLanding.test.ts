import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Checkpoints, CheckpointsLive } from "../../../../src/sync/pass/Checkpoints.js"
import { applyHistory } from "../../../../src/sync/history/History.js"
import { jobsStream } from "../../../../src/sync/streams/jobs.js"
import { visitsStream } from "../../../../src/sync/streams/visits.js"
import { Warehouse, WarehouseLive } from "../../../../src/sync/landing/Warehouse.js"
import { finishFullPass } from "../../../../src/sync/pass/PassEnd.js"
import { TestDatabaseLive } from "../../../support/database.js"
import { job, jobRead as version, lineItem as item, rowsRead } from "../../../support/jobFixtures.js"

const TestLayer = WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))

const iso = (d: unknown) => (d === null ? null : new Date(d as string).toISOString().replace(".000Z", "Z"))

/** The versions of one job (title, from, to, how it ended), oldest first. */
const jobVersions = (accountId: string, n: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ title: string; valid_from: Date; valid_to: Date | null; ended_by: string | null }>`
      SELECT title, valid_from, valid_to, ended_by FROM jobs_history WHERE account_id = ${accountId} AND id = ${job(n).id} ORDER BY valid_from`
    return rows.map((r) => `${r.title} ${iso(r.valid_from)} .. ${r.valid_to === null ? "" : `${iso(r.valid_to)} ${r.ended_by}`}`.trim())
  })

const itemVersions = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; name: string; valid_to: Date | null; ended_by: string | null }>`
      SELECT id, name, valid_to, ended_by FROM job_line_items_history WHERE account_id = ${accountId} ORDER BY id, valid_from`
    return rows.map((r) => `${r.id} ${r.name}${r.ended_by === null ? "" : ` ${r.ended_by}`}`)
  })

const countOf = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, (rows) => rows[0]!.n))

layer(TestLayer)("history of a stream's rows (SYNC_HISTORY)", (it) => {
  it.effect("every change of a tracked column is one version, in updatedAt order; re-reads, replays and older reads write none", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      yield* applyHistory([jobsStream])
      const land = (node: ReturnType<typeof version>, fetchedAt?: Date) =>
        warehouse.land({ accountId: "acc-h", stream: jobsStream, pages: rowsRead([node]), pass: undefined, ...(fetchedAt ? { fetchedAt } : {}) })

      yield* land(version(1, "first", "2025-03-01T00:00:00Z", [item("li-1", "a"), item("li-2", "a")]))
      expect(yield* jobVersions("acc-h", 1)).toEqual(["first 2025-03-01T00:00:00Z .."])
      // the same read again (a replayed event, a retried page): nothing
      yield* land(version(1, "first", "2025-03-01T00:00:00Z", [item("li-1", "a"), item("li-2", "a")]))
      // updatedAt moved, no tracked column changed (a field the connector does not keep): nothing either
      yield* land(version(1, "first", "2025-03-01T12:00:00Z", [item("li-1", "a"), item("li-2", "a")]))
      expect(yield* jobVersions("acc-h", 1)).toEqual(["first 2025-03-01T00:00:00Z .."])

      yield* land(version(1, "second", "2025-03-02T00:00:00Z", [item("li-1", "b", "2025-03-02T00:00:00Z")]))
      expect(yield* jobVersions("acc-h", 1)).toEqual(["first 2025-03-01T00:00:00Z .. 2025-03-02T00:00:00Z updated", "second 2025-03-02T00:00:00Z .."])
      // a read older than the stored row (an event applied late) lands nothing, so writes no version
      yield* land(version(1, "stale", "2025-03-01T18:00:00Z"))
      expect(yield* jobVersions("acc-h", 1)).toEqual(["first 2025-03-01T00:00:00Z .. 2025-03-02T00:00:00Z updated", "second 2025-03-02T00:00:00Z .."])
      // line items: li-1 changed (two versions), li-2 removed by its parent (its version closed as deleted)
      expect(yield* itemVersions("acc-h")).toEqual(["li-1 a updated", "li-1 b", "li-2 a deleted"])

      // deleted (a destroy event): the version ends at the deletion, its line items' too
      const at = new Date("2026-01-01T00:00:10Z")
      expect(yield* warehouse.markDeleted("acc-h", jobsStream, [job(1).id], at)).toEqual([job(1).id])
      expect(yield* jobVersions("acc-h", 1)).toEqual([
        "first 2025-03-01T00:00:00Z .. 2025-03-02T00:00:00Z updated",
        "second 2025-03-02T00:00:00Z .. 2026-01-01T00:00:10Z deleted"
      ])
      expect(yield* itemVersions("acc-h")).toEqual(["li-1 a updated", "li-1 b deleted", "li-2 a deleted"])
      // marked again (a replayed destroy): nothing
      yield* warehouse.markDeleted("acc-h", jobsStream, [job(1).id], new Date("2026-01-01T00:00:20Z"))
      expect(yield* countOf("jobs_history")).toBe(2)
      // found again with a newer change: a new version from its updatedAt
      yield* land(version(1, "third", "2026-02-01T00:00:00Z", [item("li-1", "b", "2025-03-02T00:00:00Z")]), new Date("2026-01-01T00:00:30Z"))
      expect((yield* jobVersions("acc-h", 1)).slice(-1)).toEqual(["third 2026-02-01T00:00:00Z .."])
      // its line item unchanged since before (same updatedAt): the service had it all along, its version is open again
      expect(yield* itemVersions("acc-h")).toEqual(["li-1 a updated", "li-1 b", "li-2 a deleted"])
    })
  )

  it.effect("a full pass's sweep closes the versions of the rows it did not see", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* applyHistory([jobsStream])
      yield* warehouse.land({ accountId: "acc-s", stream: jobsStream, pages: rowsRead([version(1, "a", "2025-03-01T00:00:00Z"), version(2, "b", "2025-03-01T00:00:00Z")]), pass: undefined })
      yield* checkpoints.begin("acc-s", jobsStream, "full")
      const pass = { kind: "full" as const, partition: 0, position: 1, anchors: [job(1).id], shifted: false, highWaterMark: null }
      yield* warehouse.land({ accountId: "acc-s", stream: jobsStream, pages: rowsRead([version(1, "a", "2025-03-01T00:00:00Z")]), pass })
      expect((yield* finishFullPass("acc-s", jobsStream)).deleted).toBe(1)
      expect(yield* jobVersions("acc-s", 1)).toEqual(["a 2025-03-01T00:00:00Z .."])
      const [gone] = yield* jobVersions("acc-s", 2)
      expect(gone).toMatch(/^b 2025-03-01T00:00:00Z \.\. \S+ deleted$/)
    })
  )

  it.effect("turned on over existing rows, history starts at them; turned off, nothing is written; on again, it resumes from the rows then", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const sql = yield* SqlClient.SqlClient
      yield* applyHistory([])
      const land = (...nodes: ReadonlyArray<ReturnType<typeof version>>) => warehouse.land({ accountId: "acc-t", stream: jobsStream, pages: rowsRead(nodes), pass: undefined })
      yield* land(version(11, "kept", "2025-04-01T00:00:00Z"), version(12, "gone", "2025-04-01T00:00:00Z"))
      yield* warehouse.markDeleted("acc-t", jobsStream, [job(12).id], new Date("2026-01-01T00:00:00Z"))
      yield* land(version(11, "changed before history", "2025-04-02T00:00:00Z"))
      expect(yield* jobVersions("acc-t", 11)).toEqual([])

      expect(yield* applyHistory([jobsStream])).toEqual({ started: ["jobs", "job_line_items"], stopped: [] })
      expect(yield* applyHistory([jobsStream])).toEqual({ started: [], stopped: [] })
      expect(yield* jobVersions("acc-t", 11)).toEqual(["changed before history 2025-04-02T00:00:00Z .."])
      expect(yield* jobVersions("acc-t", 12)).toEqual([])
      const [on] = yield* sql<{ stream: string }>`SELECT stream FROM history_tables WHERE table_name = 'jobs'`
      expect(on!.stream).toBe("jobs")

      expect(yield* applyHistory([])).toEqual({ started: [], stopped: ["jobs", "job_line_items"] })
      yield* land(version(11, "while off", "2025-04-03T00:00:00Z"))
      expect(yield* jobVersions("acc-t", 11)).toEqual(["changed before history 2025-04-02T00:00:00Z .."])

      yield* applyHistory([jobsStream])
      expect(yield* jobVersions("acc-t", 11)).toEqual([
        "changed before history 2025-04-02T00:00:00Z .. 2025-04-03T00:00:00Z updated",
        "while off 2025-04-03T00:00:00Z .."
      ])
      yield* applyHistory([])
    })
  )

  it.effect("a stream without updatedAt (visits): a version starts when the row was read", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const sql = yield* SqlClient.SqlClient
      yield* applyHistory([visitsStream])
      const visit = (title: string) => {
        const node = {
          id: "visit-1",
          title,
          visitStatus: "UPCOMING",
          startAt: "2025-05-01T09:00:00Z",
          endAt: null,
          completedAt: null,
          createdAt: "2025-04-01T00:00:00Z",
          allDay: false,
          isComplete: false,
          job: { id: job(1).id },
          client: { id: "c-1" },
          property: { id: "p-1" },
          invoice: null,
          lineItems: { nodes: [] }
        }
        return { node: node as { id: string }, raw: node }
      }
      const [before] = yield* sql<{ now: Date }>`SELECT clock_timestamp() AS now`
      yield* warehouse.land({ accountId: "acc-v", stream: visitsStream, pages: rowsRead([visit("one")]), pass: undefined })
      yield* warehouse.land({ accountId: "acc-v", stream: visitsStream, pages: rowsRead([visit("one")]), pass: undefined })
      yield* warehouse.land({ accountId: "acc-v", stream: visitsStream, pages: rowsRead([visit("two")]), pass: undefined })
      const [after] = yield* sql<{ now: Date }>`SELECT clock_timestamp() AS now`
      const rows = yield* sql<{ title: string; valid_from: Date; valid_to: Date | null }>`
        SELECT title, valid_from, valid_to FROM visits_history WHERE account_id = 'acc-v' ORDER BY valid_from`
      expect(rows.map((r) => r.title)).toEqual(["one", "two"])
      for (const r of rows) {
        expect(r.valid_from.getTime()).toBeGreaterThanOrEqual(before!.now.getTime())
        expect(r.valid_from.getTime()).toBeLessThanOrEqual(after!.now.getTime())
      }
      expect(rows[0]!.valid_to?.getTime()).toBe(rows[1]!.valid_from.getTime())
      yield* applyHistory([])
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Checkpoints, CheckpointsLive } from "../../../src/sync/pass/Checkpoints.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { Warehouse, WarehouseLive } from "../../../src/sync/landing/Warehouse.js"
import { finishFullPass } from "../../../src/sync/pass/PassEnd.js"
import { TestDatabaseLive } from "../../support/database.js"
import { job, jobRead, lineItem as item, rowsRead } from "../../support/jobFixtures.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

const TestLayer = WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))

/** Job 1 as read at some moment: its title, update time and line items. */
const version = (title: string, updatedAt: string, items: ReadonlyArray<ReturnType<typeof item>>) => [jobRead(1, title, updatedAt, items)]

const stored = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ title: string; deleted: boolean }>`SELECT title, deleted_at IS NOT NULL AS deleted FROM jobs WHERE account_id = 'acc-o' AND id = ${job(1).id}`
  const items = yield* sql<{ id: string; deleted: boolean }>`
    SELECT id, deleted_at IS NOT NULL AS deleted FROM job_line_items WHERE account_id = 'acc-o' ORDER BY id`
  return { ...row!, items: items.map((i) => `${i.id}${i.deleted ? " (deleted)" : ""}`) }
})

layer(TestLayer)("a pass and change events land the same rows in any order", (it) => {
  it.effect("an older read never overwrites newer data (updatedAt), nor its children, and still counts as seen", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-o", jobsStream, "full")
      // a change event's re-read lands the newer version outside the pass
      yield* warehouse.land({ accountId: "acc-o", stream: jobsStream, pages: rowsRead(version("new", "2025-03-02T00:00:00Z", [item("li-1", "b")])), pass: undefined })
      // then the pass lands a page it had fetched before the change
      const pass = { kind: "full" as const, partition: 0, position: 1, anchors: [job(1).id], shifted: false, highWaterMark: null }
      expect(yield* warehouse.land({ accountId: "acc-o", stream: jobsStream, pages: rowsRead(version("old", "2025-03-01T00:00:00Z", [item("li-1", "a"), item("li-2", "a")])), pass })).toBe(0)
      expect(yield* stored).toEqual({ title: "new", deleted: false, items: ["li-1"] })
      // the pass saw the row: its sweep does not mark it deleted
      expect((yield* finishFullPass("acc-o", jobsStream)).deleted).toBe(0)
      // a newer or equal read lands
      yield* warehouse.land({ accountId: "acc-o", stream: jobsStream, pages: rowsRead(version("newer", "2025-03-03T00:00:00Z", [item("li-3", "c")])), pass: undefined })
      expect(yield* stored).toEqual({ title: "newer", deleted: false, items: ["li-1 (deleted)", "li-3"] })
    })
  )

  it.effect("a row marked deleted (with its children) is not brought back by a read fetched before, only by one after", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s))
      const node = version("newer", "2025-03-03T00:00:00Z", [item("li-3", "c")])
      expect(yield* warehouse.markDeleted("acc-o", jobsStream, [job(1).id, "job-unknown"], t(10))).toEqual([job(1).id])
      expect(yield* stored).toEqual({ title: "newer", deleted: true, items: ["li-1 (deleted)", "li-3 (deleted)"] })
      // marked again: nothing changes
      expect(yield* warehouse.markDeleted("acc-o", jobsStream, [job(1).id], t(20))).toEqual([])
      // a page fetched before the deletion was known lands nothing of the row
      yield* warehouse.land({ accountId: "acc-o", stream: jobsStream, pages: rowsRead(node), pass: undefined, fetchedAt: t(5) })
      expect(yield* stored).toEqual({ title: "newer", deleted: true, items: ["li-1 (deleted)", "li-3 (deleted)"] })
      // a read after it that still finds the row: the service has it, so it is live again with its children
      yield* warehouse.land({ accountId: "acc-o", stream: jobsStream, pages: rowsRead(node), pass: undefined, fetchedAt: t(30) })
      expect(yield* stored).toEqual({ title: "newer", deleted: false, items: ["li-1 (deleted)", "li-3"] })
    })
  )
})

// A stream with nothing landed under its rows (jobs without line items and custom fields): the guard is the upsert's
// own condition on the stored row it conflicts with, not a lookup before it; the same rules hold.
const storedScalars = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ title: string; deleted: boolean }>`SELECT title, deleted_at IS NOT NULL AS deleted FROM jobs WHERE account_id = 'acc-s' AND id = ${job(1).id}`
  return row
})

layer(TestLayer)("the same rules for a stream without line items or custom fields", (it) => {
  it.effect("an older read never overwrites newer data, an equal or newer one lands, and the older still counts as seen", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const checkpoints = yield* Checkpoints
      expect(jobScalarsStream.children).toEqual([])
      expect(jobScalarsStream.customFields).toBeUndefined()
      yield* checkpoints.begin("acc-s", jobScalarsStream, "full")
      const land = (title: string, updatedAt: string, pass?: Parameters<typeof warehouse.land>[0]["pass"]) =>
        warehouse.land({ accountId: "acc-s", stream: jobScalarsStream, pages: rowsRead([jobRead(1, title, updatedAt)]), pass })
      expect(yield* land("new", "2025-03-02T00:00:00Z")).toBe(1)
      const pass = { kind: "full" as const, partition: 0, position: 1, anchors: [job(1).id], shifted: false, highWaterMark: null }
      expect(yield* land("old", "2025-03-01T00:00:00Z", pass)).toBe(0)
      expect(yield* storedScalars).toEqual({ title: "new", deleted: false })
      expect((yield* finishFullPass("acc-s", jobScalarsStream)).deleted).toBe(0)
      expect(yield* land("same time, other title", "2025-03-02T00:00:00Z")).toBe(1)
      expect(yield* storedScalars).toEqual({ title: "same time, other title", deleted: false })
      expect(yield* land("newer", "2025-03-03T00:00:00Z")).toBe(1)
      expect(yield* storedScalars).toEqual({ title: "newer", deleted: false })
    })
  )

  it.effect("a row marked deleted is not brought back by a read fetched before, only by one after", () =>
    Effect.gen(function* () {
      const warehouse = yield* Warehouse
      const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s))
      const pages = rowsRead([jobRead(1, "back", "2025-03-04T00:00:00Z")])
      expect(yield* warehouse.markDeleted("acc-s", jobScalarsStream, [job(1).id], t(10))).toEqual([job(1).id])
      expect(yield* warehouse.land({ accountId: "acc-s", stream: jobScalarsStream, pages, pass: undefined, fetchedAt: t(5) })).toBe(0)
      expect(yield* storedScalars).toEqual({ title: "newer", deleted: true })
      expect(yield* warehouse.land({ accountId: "acc-s", stream: jobScalarsStream, pages, pass: undefined, fetchedAt: t(30) })).toBe(1)
      expect(yield* storedScalars).toEqual({ title: "back", deleted: false })
    })
  )
})

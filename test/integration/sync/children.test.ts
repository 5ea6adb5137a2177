import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Checkpoints, CheckpointsLive } from "../../../src/sync/pass/Checkpoints.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { visitsStream } from "../../../src/sync/streams/visits.js"
import type { AnyStream } from "../../../src/sync/streams/Stream.js"
import { Warehouse, WarehouseLive } from "../../../src/sync/landing/Warehouse.js"
import { finishFullPass } from "../../../src/sync/pass/PassEnd.js"
import { TestDatabaseLive } from "../../support/database.js"
import { job, rowsRead } from "../../support/jobFixtures.js"

const TestLayer = WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))

const lineItem = (id: string, overrides: Record<string, unknown> = {}) => ({
  id,
  name: `Item ${id}`,
  description: "",
  category: "SERVICE",
  quantity: 2,
  unitPrice: 10.5,
  totalPrice: 21,
  totalCost: null,
  taxable: true,
  linkedProductOrService: { id: "prod-1" },
  createdAt: "2025-01-01T00:00:00Z",
  updatedAt: "2025-01-02T00:00:00Z",
  ...overrides
})

const fields = {
  text: { __typename: "CustomFieldText", id: "cf-text", label: "Gate code", valueText: "4412" },
  number: { __typename: "CustomFieldNumber", id: "cf-num", label: "Lot size", unit: "acres", valueNumber: 1.5 },
  area: { __typename: "CustomFieldArea", id: "cf-area", label: "Lawn", unit: "ft", valueArea: { length: 30, width: 20 } },
  link: { __typename: "CustomFieldLink", id: "cf-link", label: "Photos", valueText: "album", valueUrl: "https://example.test/a" },
  bool: { __typename: "CustomFieldBoolean", id: null, label: "Has dog", valueBoolean: true },
  select: { __typename: "CustomFieldSelect", id: "cf-sel", label: "Season", valueSelect: "Spring" }
}

/** A job as the full jobs stream selects it: links, line items, custom fields. */
const fullJob = (n: number, items: ReadonlyArray<ReturnType<typeof lineItem>>, customFields: ReadonlyArray<Record<string, unknown>>) => ({
  ...job(n),
  client: { id: "client-1" },
  property: { id: "property-1" },
  quote: null,
  request: null,
  salesperson: { id: "user-1" },
  lineItems: { nodes: items },
  customFields
})

const land = (stream: AnyStream, accountId: string, nodes: ReadonlyArray<Record<string, unknown>>, options: { position: number; last?: boolean }) =>
  Effect.gen(function* () {
    const warehouse = yield* Warehouse
    const received = nodes.map((node) => ({ node: node as { id: string }, raw: node }))
    yield* warehouse.land({
      accountId,
      stream,
      pages: rowsRead(received),
      pass: { kind: "full", partition: 0, position: options.position, anchors: nodes.map((n) => n.id as string), shifted: false, highWaterMark: null }
    })
    return options.last ? (yield* finishFullPass(accountId, stream)).deleted : 0
  })

layer(TestLayer)("line items and custom fields land with their parent", (it) => {
  it.effect("a parent's children are replaced with it: changed ones updated, removed ones marked deleted, new ones added", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const checkpoints = yield* Checkpoints
      const items = () => sql<{ id: string; job_id: string; name: string; quantity: string; linked_product_or_service_id: string; deleted: boolean }>`
        SELECT id, job_id, name, quantity, linked_product_or_service_id, deleted_at IS NOT NULL AS deleted FROM job_line_items
        WHERE account_id = 'acc-c' ORDER BY id`
      const custom = () => sql<{ field_key: string; label: string; kind: string; value_text: string; value: unknown; deleted: boolean }>`
        SELECT field_key, label, kind, value_text, value, deleted_at IS NOT NULL AS deleted FROM custom_fields
        WHERE account_id = 'acc-c' AND parent_type = 'Job' AND parent_id = ${job(1).id} ORDER BY field_key`

      yield* checkpoints.begin("acc-c", jobsStream, "full")
      yield* land(jobsStream, "acc-c", [fullJob(1, [lineItem("a"), lineItem("b"), lineItem("c")], Object.values(fields))], { position: 1 })
      expect((yield* items()).map((r) => [r.id, r.job_id, r.linked_product_or_service_id, r.deleted])).toEqual([
        ["a", job(1).id, "prod-1", false],
        ["b", job(1).id, "prod-1", false],
        ["c", job(1).id, "prod-1", false]
      ])
      const [row] = yield* sql<{ client_id: string; salesperson_id: string; quote_id: string | null }>`
        SELECT client_id, salesperson_id, quote_id FROM jobs WHERE account_id = 'acc-c'`
      expect(row).toEqual({ client_id: "client-1", salesperson_id: "user-1", quote_id: null })
      expect((yield* custom()).map((r) => [r.field_key, r.kind, r.value_text, r.value])).toEqual([
        ["Has dog", "CustomFieldBoolean", "true", true],
        ["cf-area", "CustomFieldArea", "30 x 20 ft", { length: 30, width: 20 }],
        ["cf-link", "CustomFieldLink", "https://example.test/a", { text: "album", url: "https://example.test/a" }],
        ["cf-num", "CustomFieldNumber", "1.5", 1.5],
        ["cf-sel", "CustomFieldSelect", "Spring", "Spring"],
        ["cf-text", "CustomFieldText", "4412", "4412"]
      ])

      // the job again: item a changed, b gone, d new; two custom fields left, one changed
      yield* land(jobsStream, "acc-c", [fullJob(1, [lineItem("a", { quantity: 5 }), lineItem("c"), lineItem("d")], [{ ...fields.text, valueText: "9999" }, fields.number])], {
        position: 2
      })
      expect((yield* items()).map((r) => [r.id, r.quantity, r.deleted])).toEqual([
        // numeric: the decimal as sent, as Postgres gives it back
        ["a", "5", false],
        ["b", "2", true],
        ["c", "2", false],
        ["d", "2", false]
      ])
      expect((yield* custom()).map((r) => [r.field_key, r.value_text, r.deleted])).toEqual([
        ["Has dog", "true", true],
        ["cf-area", "30 x 20 ft", true],
        ["cf-link", "https://example.test/a", true],
        ["cf-num", "1.5", false],
        ["cf-sel", "Spring", true],
        ["cf-text", "9999", false]
      ])

      // a line item that comes back loses its mark
      yield* land(jobsStream, "acc-c", [fullJob(1, [lineItem("a", { quantity: 5 }), lineItem("b"), lineItem("c"), lineItem("d")], [fields.text])], { position: 3 })
      expect((yield* items()).filter((r) => r.deleted)).toEqual([])
    })
  )

  it.effect("a parent the full pass finds gone takes its line items and custom fields with it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-d", jobsStream, "full")
      yield* land(jobsStream, "acc-d", [fullJob(1, [lineItem("x1")], [fields.text]), fullJob(2, [lineItem("x2"), lineItem("x3")], [fields.number])], {
        position: 2,
        last: true
      })
      yield* checkpoints.begin("acc-d", jobsStream, "full")
      expect(yield* land(jobsStream, "acc-d", [fullJob(1, [lineItem("x1")], [fields.text])], { position: 1, last: true })).toBe(1)
      const items = yield* sql<{ id: string; deleted: boolean }>`
        SELECT id, deleted_at IS NOT NULL AS deleted FROM job_line_items WHERE account_id = 'acc-d' ORDER BY id`
      expect(items.map((r) => [r.id, r.deleted])).toEqual([["x1", false], ["x2", true], ["x3", true]])
      const custom = yield* sql<{ parent_id: string; deleted: boolean }>`
        SELECT parent_id, deleted_at IS NOT NULL AS deleted FROM custom_fields WHERE account_id = 'acc-d' ORDER BY parent_id`
      expect(custom.map((r) => [r.parent_id, r.deleted])).toEqual([[job(1).id, false], [job(2).id, true]])
    })
  )

  it.effect("a child with a NUL lands through the serialized path: U+FFFD in its column, spelled out in its raw", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const checkpoints = yield* Checkpoints
      yield* checkpoints.begin("acc-n", jobsStream, "full")
      yield* land(jobsStream, "acc-n", [fullJob(1, [lineItem("n1", { name: "pipe\u0000fitting" })], [])], { position: 1 })
      const [item] = yield* sql<{ name: string; raw: { name: string } }>`SELECT name, raw FROM job_line_items WHERE account_id = 'acc-n'`
      expect(item!.name).toBe("pipe\uFFFDfitting")
      expect(item!.raw.name).toBe("pipe\\u0000fitting")
    })
  )

  it.effect("a visit's line items are its job's: the same item under two visits is two rows", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const checkpoints = yield* Checkpoints
      const visit = (id: string) => ({
        id,
        title: null,
        visitStatus: "UPCOMING",
        job: { id: "job-1" },
        client: { id: "client-1" },
        property: { id: "property-1" },
        invoice: null,
        createdBy: null,
        allDay: false,
        isComplete: false,
        createdAt: "2025-01-01T00:00:00Z",
        actionsUponComplete: ["CREATE_INVOICE"],
        lineItems: { nodes: [lineItem("shared")] }
      })
      yield* checkpoints.begin("acc-v", visitsStream, "full")
      yield* land(visitsStream, "acc-v", [visit("v1"), visit("v2")], { position: 2 })
      const rows = yield* sql<{ visit_id: string; id: string }>`SELECT visit_id, id FROM visit_line_items WHERE account_id = 'acc-v' ORDER BY visit_id`
      expect(rows).toEqual([{ visit_id: "v1", id: "shared" }, { visit_id: "v2", id: "shared" }])
      const [v] = yield* sql<{ actions_upon_complete: unknown; job_id: string }>`SELECT actions_upon_complete, job_id FROM visits WHERE account_id = 'acc-v' AND id = 'v1'`
      expect(v).toEqual({ actions_upon_complete: ["CREATE_INVOICE"], job_id: "job-1" })
    })
  )
})

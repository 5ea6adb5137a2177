import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { serviceSchema } from "../../../src/api/serviceSchema.js"
import { deriveColumns } from "../../../src/sync/streams/columns.js"
import { CoordinateText, DateTime, embedded, Enum, link } from "../../../src/sync/streams/fields.js"

/** The columns and selection derived from one field of a node of `nodeType`, checked against the schema subset. */
const derived = (nodeType: string, fields: Schema.Struct.Fields, excluded: ReadonlyArray<string> = []) =>
  deriveColumns(fields, serviceSchema().getType(nodeType) ?? undefined, new Set(excluded))

describe("columns derived from a node Schema", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly nodeType: string
    readonly fields: Schema.Struct.Fields
    readonly columns: ReadonlyArray<{ path: ReadonlyArray<string>; column: string; type: string; nullable: boolean; link?: string }>
    readonly selection: ReadonlyArray<string>
  }> = [
    { name: "Int -> integer", nodeType: "Job", fields: { jobNumber: Schema.Int }, columns: [{ path: ["jobNumber"], column: "job_number", type: "integer", nullable: false }], selection: ["jobNumber"] },
    { name: "DateTime -> timestamptz", nodeType: "Job", fields: { createdAt: DateTime }, columns: [{ path: ["createdAt"], column: "created_at", type: "timestamptz", nullable: false }], selection: ["createdAt"] },
    { name: "NullOr(DateTime) -> nullable timestamptz", nodeType: "Job", fields: { completedAt: Schema.NullOr(DateTime) }, columns: [{ path: ["completedAt"], column: "completed_at", type: "timestamptz", nullable: true }], selection: ["completedAt"] },
    { name: "String -> text", nodeType: "Job", fields: { title: Schema.NullOr(Schema.String) }, columns: [{ path: ["title"], column: "title", type: "text", nullable: true }], selection: ["title"] },
    { name: "an enum kept as a string -> text", nodeType: "Job", fields: { jobStatus: Enum }, columns: [{ path: ["jobStatus"], column: "job_status", type: "text", nullable: false }], selection: ["jobStatus"] },
    { name: "a union of string literals -> text", nodeType: "Job", fields: { jobType: Schema.Literal("ONE_OFF", "RECURRING") }, columns: [{ path: ["jobType"], column: "job_type", type: "text", nullable: false }], selection: ["jobType"] },
    { name: "Number -> numeric (exact, as sent)", nodeType: "Job", fields: { total: Schema.Number }, columns: [{ path: ["total"], column: "total", type: "numeric", nullable: false }], selection: ["total"] },
    {
      name: "a coordinate -> double precision, sent as a number or as a string",
      nodeType: "ClientAddress",
      fields: { latitude: CoordinateText },
      columns: [{ path: ["latitude"], column: "latitude", type: "double precision", nullable: false }],
      selection: ["latitude"]
    },
    { name: "Boolean -> boolean", nodeType: "Job", fields: { readyToClose: Schema.Boolean }, columns: [{ path: ["readyToClose"], column: "ready_to_close", type: "boolean", nullable: false }], selection: ["readyToClose"] },
    { name: "optional -> nullable", nodeType: "Job", fields: { instructions: Schema.optional(Schema.String) }, columns: [{ path: ["instructions"], column: "instructions", type: "text", nullable: true }], selection: ["instructions"] },
    {
      name: "link -> <field>_id text, naming the linked stream",
      nodeType: "Job",
      fields: { client: Schema.NullOr(link("clients")) },
      columns: [{ path: ["client", "id"], column: "client_id", type: "text", nullable: true, link: "clients" }],
      selection: ["client { id }"]
    },
    {
      name: "embedded -> <field>_<inner> columns",
      nodeType: "Quote",
      fields: { amounts: embedded({ total: Schema.Number, depositAmount: Schema.NullOr(Schema.Number) }) },
      columns: [
        { path: ["amounts", "total"], column: "amounts_total", type: "numeric", nullable: false },
        { path: ["amounts", "depositAmount"], column: "amounts_deposit_amount", type: "numeric", nullable: true }
      ],
      selection: ["amounts { total depositAmount }"]
    },
    {
      name: "a nullable embedded object makes every inner column nullable",
      nodeType: "Quote",
      fields: { amounts: Schema.NullOr(embedded({ total: Schema.Number })) },
      columns: [{ path: ["amounts", "total"], column: "amounts_total", type: "numeric", nullable: true }],
      selection: ["amounts { total }"]
    },
    {
      name: "an object not marked embedded -> one jsonb column, selected whole",
      nodeType: "Quote",
      fields: { amounts: Schema.Struct({ total: Schema.Number, subtotal: Schema.Number }) },
      columns: [{ path: ["amounts"], column: "amounts", type: "jsonb", nullable: false }],
      selection: ["amounts { total subtotal }"]
    },
    { name: "an array -> jsonb", nodeType: "Invoice", fields: { jobIds: Schema.Array(Schema.String) }, columns: [{ path: ["jobIds"], column: "job_ids", type: "jsonb", nullable: false }], selection: ["jobIds"] },
    { name: "the id is selected, never a column", nodeType: "Job", fields: { id: Schema.String }, columns: [], selection: ["id"] }
  ]
  for (const c of cases) {
    it(c.name, () => {
      const { columns, selection } = derived(c.nodeType, c.fields)
      expect(columns.map(({ path, column, type, nullable, link }) => ({ path, column, type, nullable, ...(link ? { link } : {}) }))).toEqual(c.columns)
      expect(columns.every((col) => col.selected)).toBe(true)
      expect(selection).toEqual(c.selection)
    })
  }

  it("an excluded field keeps its columns, unselected, and leaves the selection", () => {
    const { columns, selection } = derived("Job", { title: Schema.String, client: link("clients") }, ["client"])
    expect(columns.map((c) => [c.column, c.selected])).toEqual([["title", true], ["client_id", false]])
    expect(selection).toEqual(["title"])
  })

  it("the schema's description comes with the column", () => {
    const [column] = derived("Job", { jobNumber: Schema.Int }).columns
    expect(column!.description).toBe((serviceSchema().getType("Job") as { getFields(): Record<string, { description?: string | null }> }).getFields().jobNumber!.description)
  })

  it("a field the type does not have, or a Schema with no column type, is an error naming the field", () => {
    expect(() => derived("Job", { nope: Schema.String })).toThrow("stream field nope: Job has no field `nope` in the schema subset")
    expect(() => derived("Quote", { amounts: embedded({ nope: Schema.Number }) })).toThrow("stream field amounts.nope")
    expect(() => derived("Job", { title: Schema.Unknown })).toThrow("stream field title: no column type for a Schema of kind UnknownKeyword")
  })
})

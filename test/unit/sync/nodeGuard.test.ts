import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { nodeGuard } from "../../../src/sync/paging/nodeGuard.js"
import { DateTime } from "../../../src/sync/streams/fields.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { job } from "../../support/jobFixtures.js"

const jobsStream = jobScalarsStream
const JobNode = jobsStream.node

const isJob = nodeGuard(JobNode)
const schemaIs = Schema.is(JobNode)

describe("nodeGuard", () => {
  it("accepts what the Schema accepts, extra fields included", () => {
    for (const node of [job(1), job(2, { title: null, startAt: null, willClientBeAutomaticallyCharged: true }), { ...job(3), client: { id: "x" } }]) {
      expect(schemaIs(node)).toBe(true)
      expect(isJob(node)).toBe(true)
    }
  })

  it("refuses what the Schema refuses, field by field", () => {
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { id: "" },
      { id: 7 },
      { jobNumber: 1.5 },
      { jobNumber: "1" },
      { title: 3 },
      { jobStatus: null },
      { total: "12.50" },
      { readyToClose: "false" },
      { willClientBeAutomaticallyCharged: 0 },
      { startAt: "next tuesday" },
      { createdAt: null },
      { updatedAt: undefined }
    ]
    for (const change of bad) {
      const node = { ...job(1), ...change }
      expect(schemaIs(node), JSON.stringify(change)).toBe(false)
      expect(isJob(node), JSON.stringify(change)).toBe(false)
    }
    const { title: _title, ...missing } = job(1)
    expect(schemaIs(missing)).toBe(false)
    expect(isJob(missing)).toBe(false)
    for (const notAnObject of [null, "job", 1, [job(1)]]) expect(isJob(notAnObject)).toBe(false)
  })

  it("refuses every node of a Schema whose decoded form differs from what was sent, so each one is decoded", () => {
    const WithTransformation = Schema.Struct({ id: Schema.String, total: Schema.NumberFromString })
    expect(nodeGuard(WithTransformation)({ id: "a", total: "1" })).toBe(false)
    expect(nodeGuard(Schema.Struct({ id: Schema.String, note: Schema.optional(Schema.String) }))({ id: "a" })).toBe(true)
  })

  it("checks arrays element by element (a visit's actionsUponComplete), as the Schema does", () => {
    const WithList = Schema.Struct({ id: Schema.String, actions: Schema.Array(Schema.Literal("a", "b")) })
    const guard = nodeGuard(WithList)
    for (const node of [{ id: "x", actions: [] }, { id: "x", actions: ["a", "b"] }, { id: "x", actions: ["c"] }, { id: "x", actions: "a" }, { id: "x", actions: null }]) {
      expect(guard(node), JSON.stringify(node)).toBe(Schema.is(WithList)(node))
    }
  })
})

describe("DateTime", () => {
  const isDateTime = Schema.is(DateTime)
  it("accepts exactly what Date.parse reads: the service's shape (checked by its pattern) and any other", () => {
    const samples = [
      "2025-03-01T09:30:00Z",
      "2025-03-01T09:30:00.123Z",
      "2025-03-01T09:30:00.123456789+05:30",
      "2024-02-29T23:59:59-23:59",
      "2025-02-31T00:00:00Z",
      "2025-03-01",
      "2025-03-01T09:30Z",
      "March 7, 2025",
      "2025-13-01T00:00:00Z",
      "2025-03-01T24:00:00Z",
      "2025-03-01T09:60:00Z",
      "2025-03-01T09:30:00",
      "next tuesday",
      ""
    ]
    for (const s of samples) expect(isDateTime(s), s).toBe(!Number.isNaN(Date.parse(s)))
  })
})

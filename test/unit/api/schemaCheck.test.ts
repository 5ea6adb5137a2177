import { describe, expect, it } from "@effect/vitest"
import { buildSchema } from "graphql"
import * as fs from "node:fs"
import { checkDocuments, type Finding } from "../../../src/api/schemaCheck.js"
import { serviceSchema, serviceSchemaPath } from "../../../src/api/serviceSchema.js"
import { sentDocuments } from "../../../src/cli/sentDocuments.js"
import { definedStreams } from "../../../src/sync/streams/index.js"

const vendored = fs.readFileSync(serviceSchemaPath, "utf8")
const documents = sentDocuments(definedStreams)

/** The vendored schema with one text replaced: the text must be there exactly once, so an edit cannot silently miss. */
const edited = (...edits: ReadonlyArray<readonly [string, string]>) => {
  let sdl = vendored
  for (const [from, to] of edits) {
    expect(sdl.split(from).length - 1, `"${from}" occurs once in the vendored schema`).toBe(1)
    sdl = sdl.replace(from, to)
  }
  return buildSchema(sdl)
}

const check = (...edits: ReadonlyArray<readonly [string, string]>) => checkDocuments(serviceSchema(), edited(...edits), documents)

const about = (findings: ReadonlyArray<Finding>, field: string) => findings.filter((f) => f.field === field)

describe("schema check: every document the program sends against another version's schema", () => {
  it("the same schema changes nothing", () => {
    expect(check()).toEqual([])
  })

  it("a removed field breaks every query that selects it (the service refuses the whole query), and only those", () => {
    const findings = check(['  "The instructions on a job"\n  instructions: String\n', ""])
    const instructions = about(findings, "Job.instructions")
    // the page by offset, and by cursor (where the service ignores offsets)
    expect(instructions.map((f) => [f.document, f.path, f.change, f.breaks])).toEqual([
      ["jobs page", "jobs.nodes.instructions", "removed from Job", true],
      ["jobs page after cursors", "jobs.nodes.instructions", "removed from Job", true]
    ])
    expect(instructions[0]!.effect).toBe("the service refuses the whole query")
    // the validation error that says the same is not listed a second time
    expect(findings).toHaveLength(2)
  })

  it("a changed type breaks when its values arrive as another JSON type, not when they stay numbers or only become non-null", () => {
    const findings = check(
      ["  title: String\n  \"The total chargeable amount", "  title: Int\n  \"The total chargeable amount"],
      ['  "The total chargeable amount of the job"\n  total: Float!', '  "The total chargeable amount of the job"\n  total: Int!'],
      ["  defaultVisitTitle: String!", "  defaultVisitTitle: String"],
      ["  invoicedTotal: Float!", "  invoicedTotal: Int"]
    )
    const [title] = about(findings, "Job.title")
    expect(title).toMatchObject({ change: "type String → Int", breaks: true, effect: "its values arrive as numbers where the program reads strings" })
    const [total] = about(findings, "Job.total")
    expect(total).toMatchObject({ change: "type Float! → Int!", breaks: false })
    const [visitTitle] = about(findings, "Job.defaultVisitTitle")
    expect(visitTitle).toMatchObject({ change: "type String! → String", breaks: true })
    expect(visitTitle!.effect).toContain("may now be null")
    // still numbers, but no longer always there
    const [invoiced] = about(findings, "Job.invoicedTotal")
    expect(invoiced).toMatchObject({ change: "type Float! → Int", breaks: true })
  })

  it("a new enum value of a field the program reads does not break it: enum values land as text", () => {
    const findings = check(["enum JobStatusTypeEnum {\n", "enum JobStatusTypeEnum {\n  paused\n"])
    expect(findings.map((f) => [f.document, f.field, f.change, f.breaks])).toEqual([
      ["jobs page", "Job.jobStatus", "JobStatusTypeEnum gains `paused`", false],
      ["jobs page after cursors", "Job.jobStatus", "JobStatusTypeEnum gains `paused`", false]
    ])
  })

  it("an enum value removed from an input the program sends (a sort key) breaks the queries built with it, named by variable and purpose", () => {
    const findings = check(['  "The field which shows the job number"\n  JOB_NUMBER\n', ""])
    expect(findings.length).toBeGreaterThan(0)
    expect(findings.every((f) => f.breaks && f.field === "$sort (jobs: full pass)")).toBe(true)
    expect(new Set(findings.map((f) => f.document))).toEqual(
      new Set(["jobs page", "jobs ids", "jobs lineItems follow-up"].flatMap((d) => [d, `${d} after cursors`]))
    )
    expect(findings[0]!.change).toContain('Value "JOB_NUMBER" does not exist in "JobSortKey" enum')
  })

  it("a removed argument or filter field the program passes breaks the query", () => {
    const findings = check(['  "The ids of the job to filter by"\n  ids: [EncodedId!]\n', ""])
    const lookup = findings.filter((f) => f.field.startsWith("$filter (jobs: lookup by id"))
    expect(lookup.length).toBeGreaterThan(0)
    expect(lookup[0]!.change).toContain('Field "ids" is not defined by type "JobFilterAttributes"')
  })
})

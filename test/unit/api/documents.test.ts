import { describe, expect, it } from "@effect/vitest"
import { specifiedRules, validate } from "graphql"
import { allDocuments, JobsPageQuery, operationName } from "../../../src/api/documents.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { serviceSchema } from "../../../src/api/serviceSchema.js"
import { JobNode } from "../../../src/sync/streams/jobs.js"
import { Kind, getNamedType, isLeafType, isObjectType } from "graphql"
import { gql } from "graphql-tag"

describe("documents", () => {
  for (const [name, document] of Object.entries(allDocuments)) {
    it(`${name} validates against the vendored schema subset`, () => {
      expect(validate(serviceSchema(), document, specifiedRules).map((e) => e.message)).toEqual([])
    })
  }

  it("an invalid document is caught by the same validation (the check can fail)", () => {
    const broken = { ...JobsPageQuery, definitions: JobsPageQuery.definitions.map((d) =>
      d.kind === Kind.FRAGMENT_DEFINITION
        ? { ...d, selectionSet: { ...d.selectionSet, selections: [...d.selectionSet.selections, { kind: Kind.FIELD, name: { kind: Kind.NAME, value: "updatedSince" } }] } }
        : d
    ) } as typeof JobsPageQuery
    expect(validate(serviceSchema(), broken).map((e) => e.message)).toEqual([`Cannot query field "updatedSince" on type "Job". Did you mean "updatedAt"?`])
  })

  it("the jobs page selects every scalar field of Job, and the node Schema decodes each of them", () => {
    const job = serviceSchema().getType("Job")
    if (!isObjectType(job)) throw new Error("Job is not an object type")
    const scalarFields = Object.values(job.getFields())
      .filter((f) => isLeafType(getNamedType(f.type)))
      .map((f) => f.name)
      .sort()
    const fragment = JobsPageQuery.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION)
    const selected = fragment && fragment.kind === Kind.FRAGMENT_DEFINITION
      ? fragment.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : [])).sort()
      : []
    expect(selected).toEqual(scalarFields)
    expect(Object.keys(JobNode.fields).sort()).toEqual(scalarFields)
  })

  it("operation names key the cost corrections", () => {
    expect(operationName(JobsPageQuery)).toBe("JobsPage")
  })
})

describe("estimateQueryCost", () => {
  it("follows the service's rule: connections multiply their children by first, nodes/pageInfo structure", () => {
    // jobs: 1 + first * (28 scalar fields + pageInfo (1 + 2))
    expect(estimateQueryCost(JobsPageQuery, { first: 100 })).toBe(1 + 100 * (28 + 3))
    expect(estimateQueryCost(JobsPageQuery, { first: 7 })).toBe(1 + 7 * 31)
    expect(estimateQueryCost(allDocuments.AccountQuery!)).toBe(3)
  })

  it("uses 100 when neither first nor last is given, and last when first is absent", () => {
    const doc = (args: string) => gql(`query { clients${args} { edges { node { id name } } totalCount } }`)
    expect(estimateQueryCost(doc(""))).toBe(1 + 100 * (2 + 1))
    expect(estimateQueryCost(doc("(last: 5)"))).toBe(1 + 5 * 3)
  })
})

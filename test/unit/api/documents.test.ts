import { describe, expect, it } from "@effect/vitest"
import { getNamedType, isLeafType, isObjectType, Kind, specifiedRules, validate } from "graphql"
import { gql } from "graphql-tag"
import { allDocuments } from "../../../src/api/documents.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { serviceSchema } from "../../../src/api/serviceSchema.js"
import { WebhookSubscriptionCreateMutation, WebhookSubscriptionsQuery } from "../../../src/sync/events/Subscriptions.js"
import { allStreams, definedStreams, jobScalarsStream } from "../../../src/sync/streams/index.js"

const jobsStream = jobScalarsStream

const documents = {
  ...allDocuments,
  ...Object.fromEntries(
    [...new Set([...allStreams, ...definedStreams])].flatMap((s) => [
      [`${s.name}/${s.document.loc?.source.body.length} page`, s.document],
      [`${s.name}/${s.document.loc?.source.body.length} ids`, s.idsDocument],
      [`${s.name}/${s.document.loc?.source.body.length} count`, s.countDocument],
      ...s.children.map((c) => [`${s.name}/${s.document.loc?.source.body.length} ${c.field} follow-up`, c.followUpDocument] as const)
    ])
  ),
  WebhookSubscriptionsQuery,
  WebhookSubscriptionCreateMutation
}

describe("documents", () => {
  for (const [name, document] of Object.entries(documents)) {
    it(`${name} validates against the vendored schema subset`, () => {
      expect(validate(serviceSchema(), document, specifiedRules).map((e) => e.message)).toEqual([])
    })
  }

  it("an invalid document is caught by the same validation (the check can fail)", () => {
    const document = jobsStream.document
    const broken = {
      ...document,
      definitions: document.definitions.map((d) => {
        if (d.kind !== Kind.OPERATION_DEFINITION) return d
        const jobs = d.selectionSet.selections[0]!
        if (jobs.kind !== Kind.FIELD || !jobs.selectionSet) return d
        const nodes = jobs.selectionSet.selections.map((s) =>
          s.kind === Kind.FIELD && s.name.value === "nodes" && s.selectionSet
            ? { ...s, selectionSet: { ...s.selectionSet, selections: [...s.selectionSet.selections, { kind: Kind.FIELD, name: { kind: Kind.NAME, value: "updatedSince" } }] } }
            : s
        )
        return { ...d, selectionSet: { ...d.selectionSet, selections: [{ ...jobs, selectionSet: { ...jobs.selectionSet, selections: nodes } }] } }
      })
    } as typeof document
    expect(validate(serviceSchema(), broken).map((e) => e.message)).toEqual([`Cannot query field "updatedSince" on type "Job". Did you mean "updatedAt"?`])
  })

  it("the jobs stream selects every scalar field of Job: its columns are the type's leaf fields (id is the key)", () => {
    const job = serviceSchema().getType("Job")
    if (!isObjectType(job)) throw new Error("Job is not an object type")
    const leaves = Object.values(job.getFields())
      .filter((f) => isLeafType(getNamedType(f.type)) && f.name !== "id")
      .map((f) => f.name)
      .sort()
    expect(jobsStream.columns.filter((c) => c.selected && c.path.length === 1).map((c) => c.path.join(".")).sort()).toEqual(leaves)
  })
})

describe("estimateQueryCost", () => {
  it("follows the service's rule: connections multiply their children by first, nodes/pageInfo structure", () => {
    // jobs: 1 + first * 28 scalar fields (no pageInfo: it would cost its fields once per row slot)
    expect(estimateQueryCost(jobsStream.document, { first: 100 })).toBe(1 + 100 * 28)
    expect(estimateQueryCost(jobsStream.document, { first: 7 })).toBe(1 + 7 * 28)
    const withPageInfo = gql(`query { jobs(first: 7) { nodes { id title } pageInfo { hasNextPage endCursor } } }`)
    expect(estimateQueryCost(withPageInfo)).toBe(1 + 7 * (2 + 3))
    expect(estimateQueryCost(allDocuments.AccountQuery!)).toBe(3)
  })

  it("uses 100 when neither first nor last is given, and last when first is absent", () => {
    const doc = (args: string) => gql(`query { clients${args} { edges { node { id name } } totalCount } }`)
    expect(estimateQueryCost(doc(""))).toBe(1 + 100 * (2 + 1))
    expect(estimateQueryCost(doc("(last: 5)"))).toBe(1 + 5 * 3)
  })
})

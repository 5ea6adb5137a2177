import { describe, expect, it } from "@effect/vitest"
import { type DocumentNode, type FieldNode, getNamedType, type GraphQLNamedType, isLeafType, isObjectType, Kind, type SelectionSetNode, specifiedRules, validate } from "graphql"
import { gql } from "graphql-tag"
import { allDocuments } from "../../../src/api/documents.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { variableProblems } from "../../../src/api/schemaCheck.js"
import { serviceSchema } from "../../../src/api/serviceSchema.js"
import { WebhookSubscriptionCreateMutation, WebhookSubscriptionsQuery } from "../../../src/changes/Subscriptions.js"
import { sentDocuments } from "../../../src/cli/sentDocuments.js"
import { allStreams, definedStreams } from "../../../src/sync/streams/index.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

const jobsStream = jobScalarsStream

// every document the program sends (sync/sentDocuments.ts, the list `schema check` goes through), with its variables
const sent = sentDocuments([...new Set([...allStreams, ...definedStreams, jobsStream])])

describe("documents", () => {
  it("the list of sent documents holds every stream's page, ids, count and follow-up queries, the account query and the mutations", () => {
    const names = sent.map((d) => d.name)
    for (const stream of definedStreams) {
      for (const kind of ["page", "ids", "count", ...stream.children.map((c) => `${c.field} follow-up`)]) expect(names).toContain(`${stream.name} ${kind}`)
    }
    for (const document of [...Object.values(allDocuments), WebhookSubscriptionsQuery, WebhookSubscriptionCreateMutation]) {
      expect(sent.map((d) => d.document)).toContain(document)
    }
  })

  for (const { name, document } of sent) {
    it(`${name} validates against the vendored schema subset`, () => {
      expect(validate(serviceSchema(), document, specifiedRules).map((e) => e.message)).toEqual([])
    })
  }

  it("the variables each document is sent with (passes, partitions, lookups, re-reads, topics) are values its schema accepts", () => {
    expect(sent.reduce((n, d) => n + d.variables.length, 0)).toBeGreaterThan(sent.length)
    expect(sent.flatMap((d) => variableProblems(serviceSchema(), d).map((p) => `${d.name}: ${p}`))).toEqual([])
  })

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

describe("the pager's documents", () => {
  /** Every connection field a document selects, and whether it asks `pageInfo { hasNextPage }`. */
  const connections = (document: DocumentNode): Array<{ readonly field: string; readonly hasNextPage: boolean }> => {
    const found: Array<{ field: string; hasNextPage: boolean }> = []
    const walk = (set: SelectionSetNode | undefined, type: GraphQLNamedType | undefined) => {
      if (set === undefined || type === undefined || !isObjectType(type)) return
      for (const sel of set.selections) {
        if (sel.kind !== Kind.FIELD) continue
        const fieldType = getNamedType(type.getFields()[sel.name.value]?.type)
        if (fieldType?.name.endsWith("Connection")) {
          const pageInfo = sel.selectionSet?.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === "pageInfo")
          found.push({ field: sel.name.value, hasNextPage: pageInfo?.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && s.name.value === "hasNextPage") ?? false })
        }
        walk(sel.selectionSet, fieldType)
      }
    }
    for (const d of document.definitions) if (d.kind === Kind.OPERATION_DEFINITION) walk(d.selectionSet, serviceSchema().getQueryType() ?? undefined)
    return found
  }

  it("ask pageInfo { hasNextPage } of every connection they page, child connections too: the end of a list is the service's word", () => {
    for (const s of new Set([...allStreams, ...definedStreams])) {
      const paged = [
        s.documents.offset.page,
        s.documents.offset.ids,
        s.documents.after.page,
        s.documents.after.ids,
        ...s.children.flatMap((c) => [c.followUp.offset, c.followUp.after])
      ]
      for (const document of paged) {
        const found = connections(document)
        expect(found.length, s.name).toBeGreaterThan(0)
        expect(found.filter((c) => !c.hasNextPage), `${s.name}: connections without pageInfo.hasNextPage`).toEqual([])
      }
    }
  })

  it("the check can fail: a connection without pageInfo is found", () => {
    expect(connections(gql(`query { jobs(first: 1) { nodes { id lineItems(first: 2) { nodes { id } } } pageInfo { hasNextPage } } }`))).toEqual([
      { field: "jobs", hasNextPage: true },
      { field: "lineItems", hasNextPage: false }
    ])
  })
})

describe("estimateQueryCost", () => {
  it("follows the service's rule: connections multiply their children by first, nodes/pageInfo structure", () => {
    // jobs: 1 + first * (28 scalar fields + pageInfo { hasNextPage }, costed once per row slot)
    expect(estimateQueryCost(jobsStream.document, { first: 100 })).toBe(1 + 100 * (28 + 2))
    expect(estimateQueryCost(jobsStream.document, { first: 7 })).toBe(1 + 7 * (28 + 2))
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

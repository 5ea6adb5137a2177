import { describe, expect, it } from "@effect/vitest"
import { executeSync, parse } from "graphql"
import { AppsAndAccounts } from "../../../src/emulator/AppsAndAccounts.js"
import { executeOperation } from "../../../src/emulator/graphql/Executor.js"
import { queryCost, selectOperation } from "../../../src/emulator/QueryCost.js"
import { serviceSchema } from "../../../src/emulator/schema.js"
import { VirtualClock } from "../../../src/emulator/VirtualClock.js"

// The emulator's executor against graphql-js's on what graphql-js can answer from the same plain data (the listed
// records): fragments, aliases, directives, unions, nulls. And its own rules: links read the linked record, line items
// page per parent, the actual cost is never above the requested one, a refused argument fails its field alone.

const world = () => {
  const appsAndAccounts = new AppsAndAccounts(new VirtualClock(() => Date.UTC(2026, 0, 1)), () => "http://127.0.0.1:1")
  return appsAndAccounts.createAccount({ jobs: 60, seed: 42 }).world
}

const run = (w: ReturnType<typeof world>, query: string, variables: Record<string, unknown> = {}) => {
  const document = parse(query)
  const result = executeOperation({
    schema: serviceSchema(),
    document,
    operation: selectOperation(document)!,
    variables,
    world: w,
    maxPageSize: 100,
    roots: { account: () => ({ id: "acc", name: "Account" }) },
    scopeOf: () => undefined,
    scopes: new Set()
  })
  return { ...result, requested: queryCost({ schema: serviceSchema(), document, variables }) }
}

/** graphql-js over the listed records: connections as `{ nodes }` of the first `first` records. */
const reference = (w: ReturnType<typeof world>, collection: string, query: string, variables: Record<string, unknown> = {}) => {
  const records = w.records(collection)
  const listed = records.collection.liveIndices().map((i) => w.listed(collection, i))
  return executeSync({
    schema: serviceSchema(),
    document: parse(query),
    variableValues: variables,
    rootValue: { [collection]: (args: { first?: number }) => ({ nodes: listed.slice(0, args.first ?? 100) }) }
  })
}

describe("the emulator's executor", () => {
  it("answers what graphql-js answers: aliases, fragments on unions, @skip/@include, __typename", () => {
    const w = world()
    const query = `query Q($skip: Boolean!, $with: Boolean!) {
      all: clients(first: 7) {
        nodes {
          __typename key: id name
          isCompany @skip(if: $skip)
          companyName @include(if: $with)
          ...Names
          customFields { __typename ... on CustomFieldText { id label valueText } ... on CustomFieldBoolean { label valueBoolean } }
        }
      }
    }
    fragment Names on Client { firstName lastName }`
    for (const variables of [{ skip: true, with: false }, { skip: false, with: true }]) {
      const ours = run(w, query, variables)
      const theirs = reference(w, "clients", query, variables)
      expect(theirs.errors).toBeUndefined()
      expect(ours.errors).toBeUndefined()
      expect(JSON.stringify(ours.data)).toBe(JSON.stringify(theirs.data))
    }
  })

  it("a link reads the linked record only when more than its id is asked; line items page per parent", () => {
    const w = world()
    const { data } = run(w, `{ jobs(first: 5) { nodes { id client { id } property { id client { id name } } lineItems(first: 2) { nodes { id } pageInfo { hasNextPage } } } } }`)
    const jobs = (data as { jobs: { nodes: Array<Record<string, any>> } }).jobs.nodes
    for (const job of jobs) {
      const listed = w.records("jobs").record(w.records("jobs").collection.indexOfId(job.id)!)
      expect(job.client).toEqual(listed.client)
      // a job's property belongs to the job's client
      if (job.property) expect(job.property.client.id).toBe(job.client.id)
      const items = w.records("jobs").children(w.records("jobs").collection.indexOfId(job.id)!)
      expect(job.lineItems.nodes.map((n: { id: string }) => n.id)).toEqual(items.slice(0, 2).map((n) => n.id))
      expect(job.lineItems.pageInfo.hasNextPage).toBe(items.length > 2)
    }
  })

  it("the actual cost counts what was returned and is never above the requested cost", () => {
    const w = world()
    const q = `{ invoices(first: 50) { nodes { id amounts { total } lineItems(first: 20) { nodes { id name } } } pageInfo { hasNextPage } } }`
    const { data, cost, requested } = run(w, q)
    const invoices = (data as { invoices: { nodes: Array<{ amounts: unknown; lineItems: { nodes: Array<unknown> } }> } }).invoices.nodes
    const items = invoices.reduce((n, i) => n + i.lineItems.nodes.length, 0)
    const withAmounts = invoices.filter((i) => i.amounts !== null).length
    // 1 + per invoice (id 1 + amounts 1, its total 1 when not null + lineItems 1 + 2 per item) + pageInfo (2) per invoice
    expect(cost).toBe(1 + invoices.length * (1 + 1 + 1 + 2) + withAmounts + items * 2)
    expect(requested).toBe(1 + 50 * (1 + 2 + (1 + 20 * 2) + 2))
    expect(cost).toBeLessThanOrEqual(requested)
  })

  it("a refused argument fails its field with an error naming it and where; a non-null field's error nulls its parent", () => {
    const w = world()
    const { data, errors } = run(w, `{ account { id } jobs(first: 2, searchTerm: "x") { nodes { id } } }`)
    expect(data).toBeNull()
    expect(errors).toHaveLength(1)
    expect(errors![0]).toMatchObject({ message: "argument searchTerm of `jobs` is not supported by the emulator", path: ["jobs"], extensions: { code: "ARGUMENT_NOT_SUPPORTED", argument: "searchTerm" } })
    const nested = run(w, `{ clients(first: 1) { nodes { id jobs(first: 1) { nodes { id } } } } }`)
    expect(nested.errors![0]).toMatchObject({ path: ["clients", "nodes", 0, "jobs"], extensions: { code: "FIELD_NOT_SUPPORTED" } })
    expect(nested.data).toBeNull()
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { handleGraphql } from "../../../src/emulator/GraphqlEndpoint.js"
import { LimitsBook } from "../../../src/emulator/RateLimits.js"
import { Registry } from "../../../src/emulator/Registry.js"
import { StatsCounter } from "../../../src/emulator/Stats.js"
import { VirtualClock } from "../../../src/emulator/VirtualClock.js"

// The fast path for plain `jobs` pages must answer byte for byte what graphql-js answers.

const setup = () => {
  const registry = new Registry(new VirtualClock(() => Date.now()), () => "http://127.0.0.1:1")
  const app = registry.createApp({ clientId: "c", clientSecret: "s", redirectUri: "http://127.0.0.1:1/cb" })
  const account = registry.createAccount({ jobs: 500 })
  const code = registry.issueCode(app, account, "http://127.0.0.1:1/cb", undefined)
  const tokens = registry.exchangeCode(app, new URLSearchParams({ code, redirect_uri: "http://127.0.0.1:1/cb" }))
  if (tokens._tag !== "Right") throw new Error("no tokens")
  account.jobs.edit([3, 7, 11], 1, registry.clock.nowMs() + 1000)
  account.jobs.remove([5, 6])
  const limits = new LimitsBook({ maxPoints: 1e9, restoreRate: 1e9, requestLimit: 1e9 })
  return { registry, limits, headers: { authorization: `Bearer ${tokens.right.access_token}` } }
}

const allFields = `id jobNumber title jobStatus jobType billingType source instructions defaultVisitTitle jobberWebUri total invoicedTotal
  uninvoicedTotal completedAndUninvoicedVisitsCount completedAndUninvoicedVisitsTotal readyToClose allowReviewRequest
  visitGenerationInProgress visitReschedulingInProgress willClientBeAutomaticallyCharged startAt endAt completedAt
  bookingConfirmationSentAt nextDateToSendReviewSms pendingInvoiceStartsAt createdAt updatedAt`

const documents: ReadonlyArray<[string, string, Record<string, unknown>?]> = [
  ["plain", "{ jobs(first: 7) { nodes { id jobNumber title } pageInfo { hasNextPage endCursor } } }"],
  ["every scalar, fragment, variables, sort", `query P($first: Int!, $after: String, $sort: [JobsSortInput!]) {
    jobs(first: $first, after: $after, sort: $sort) { nodes { ...F } pageInfo { hasNextPage endCursor hasPreviousPage startCursor } } }
    fragment F on Job { ${allFields} }`, { first: 40, sort: [{ key: "UPDATED_AT", direction: "DESCENDING" }] }],
  ["aliases, duplicates, typenames, inline fragment", `{ j: jobs(first: 3) { __typename pageInfo { __typename e: endCursor hasNextPage } items: nodes {
    __typename n: jobNumber id ... on Job { id title } } } }`],
  ["createdAt filter", `{ jobs(first: 5, filter: { createdAt: { after: "2000-01-01T00:00:00Z" } }) { nodes { id createdAt } pageInfo { hasNextPage } } }`],
  ["refused argument", `{ jobs(first: 5, searchTerm: "x") { nodes { id } } }`],
  ["too large a page", `{ jobs(first: 500) { nodes { id } } }`],
  ["bad variables", `query P($first: Int!) { jobs(first: $first) { nodes { id } } }`, { first: "ten" }],
  ["empty page", `{ jobs(first: 0) { nodes { id } pageInfo { hasNextPage endCursor startCursor hasPreviousPage } } }`]
]

describe("fast path for jobs pages", () => {
  it.effect("answers exactly what graphql-js answers (data, errors and cost), page after page", () =>
    Effect.promise(async () => {
      const { registry, limits, headers } = setup()
      for (const [name, query, variables] of documents) {
        const body = JSON.stringify({ query, ...(variables ? { variables } : {}) })
        const slow = await handleGraphql({ registry, limits, stats: new StatsCounter(), fastPath: false }, headers, body)
        const fast = await handleGraphql({ registry, limits, stats: new StatsCounter() }, headers, body)
        const strip = (b: string) => {
          const j = JSON.parse(b)
          delete j.extensions.cost.throttleStatus
          return JSON.stringify(j)
        }
        expect(strip(fast.body), name).toBe(strip(slow.body))
        expect(fast.status, name).toBe(slow.status)
      }
      // a whole pass in pages of 64 over both paths
      let after: string | null = null
      do {
        const body = JSON.stringify({ query: `query P($after: String) { jobs(first: 64, after: $after) { nodes { ${allFields} } pageInfo { hasNextPage endCursor } } }`, variables: { after } })
        const slow = JSON.parse((await handleGraphql({ registry, limits, stats: new StatsCounter(), fastPath: false }, headers, body)).body)
        const fast = JSON.parse((await handleGraphql({ registry, limits, stats: new StatsCounter() }, headers, body)).body)
        expect(fast.data).toEqual(slow.data)
        after = fast.data.jobs.pageInfo.hasNextPage ? fast.data.jobs.pageInfo.endCursor : null
      } while (after)
    })
  )
})

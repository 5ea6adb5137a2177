import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { parse as gql, print } from "graphql"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { makeTestEmulator } from "../../support/emulator.js"
import { ACCOUNT_QUERY, connect, graphql, pageQuery } from "../../support/emulatorClient.js"

describe("GraphQL endpoint: cost and limits", () => {
  it.scopedLive("every response carries extensions.cost; requested cost uses first, actual cost the nodes returned", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 30 })
      const { access_token } = yield* connect(emu)
      const sentAt = Date.now()
      const account = yield* graphql(emu, access_token, ACCOUNT_QUERY)
      const elapsedMs = Date.now() - sentAt
      const { currentlyAvailable, ...cost } = account.json.extensions.cost.throttleStatus
      expect({ ...account.json.extensions.cost, throttleStatus: cost }).toEqual({
        requestedQueryCost: 3,
        actualQueryCost: 3,
        throttleStatus: { maximumAvailable: 10000, restoreRate: 500 }
      })
      // 3 points taken from a full bucket; on a loaded machine some of them may be restored (500/s) before the answer
      expect(currentlyAvailable).toBeGreaterThanOrEqual(9997)
      expect(currentlyAvailable).toBeLessThanOrEqual(Math.min(10000, 9997 + Math.ceil((elapsedMs * 500) / 1000)))
      // jobs: 1 + m * (nodes{id jobNumber title}=3 + pageInfo{hasNextPage endCursor}=3)
      const res = yield* graphql(emu, access_token, "{ jobs(first: 50) { nodes { id jobNumber title } pageInfo { hasNextPage endCursor } } }")
      expect(res.json.data.jobs.nodes).toHaveLength(30)
      expect(res.json.extensions.cost.requestedQueryCost).toBe(1 + 50 * 6)
      expect(res.json.extensions.cost.actualQueryCost).toBe(1 + 30 * 6)
      // no first/last: 100 requested; edges/node/__typename cost nothing themselves
      const edges = yield* graphql(emu, access_token, "{ jobs { __typename edges { cursor node { id __typename } } totalCount } }")
      expect(edges.json.extensions.cost.requestedQueryCost).toBe(1 + 100 * (2 + 1))
      expect(edges.json.extensions.cost.actualQueryCost).toBe(1 + 30 * 3)
      // query errors after auth carry the cost too
      const invalid = yield* graphql(emu, access_token, "{ jobs(first: 1) { nodes { nope } } }")
      expect(invalid.json.extensions.cost.requestedQueryCost).toBe(0)
    })
  )

  it.scopedLive("the line items' totalCount a page of jobs asks costs one point per line item slot asked, one per line item returned; the estimate is the service's", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 30, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } })
      const { access_token } = yield* connect(emu)
      const withCount = print(jobsStream.document)
      // the one totalCount of the page: its line items'
      expect(withCount.match(/\btotalCount\b/g)).toHaveLength(1)
      const withoutCount = withCount.replace(/\btotalCount\b/, "")
      const variables = { first: 25, offset: 0, lineItemsFirst: 20 }
      const [a, b] = [yield* graphql(emu, access_token, withCount, { variables }), yield* graphql(emu, access_token, withoutCount, { variables })]
      expect(a.json.errors).toBeUndefined()
      const items = (a.json.data.jobs.nodes as ReadonlyArray<{ lineItems: { nodes: ReadonlyArray<unknown>; totalCount: number } }>).reduce((n, j) => n + j.lineItems.nodes.length, 0)
      expect(items).toBeGreaterThan(25)
      // the estimate the budget paces by counts the line items' totalCount as the service does (it stays above the
      // service's requested cost by the custom fields, a plain list it counts as its whole selection)
      const estimated = [estimateQueryCost(jobsStream.document, variables), estimateQueryCost(gql(withoutCount), variables)]
      expect(a.json.extensions.cost.requestedQueryCost - b.json.extensions.cost.requestedQueryCost).toBe(25 * 20)
      expect(estimated[0]! - estimated[1]!).toBe(25 * 20)
      expect(estimated[0]).toBeGreaterThanOrEqual(a.json.extensions.cost.requestedQueryCost)
      expect(a.json.extensions.cost.actualQueryCost - b.json.extensions.cost.actualQueryCost).toBe(items)
    })
  )

  it.scopedLive("a throttled query costs nothing; after advanceClock the restored bucket accepts again", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 200, limits: { maxPoints: 1000, restoreRate: 50 } })
      const { access_token } = yield* connect(emu)
      const q = "{ jobs(first: 100) { nodes { id jobNumber title } } }" // 301 points
      const available: Array<number> = []
      for (let i = 0; i < 3; i++) available.push((yield* graphql(emu, access_token, q)).json.extensions.cost.throttleStatus.currentlyAvailable)
      expect(available[2]).toBeLessThan(301)
      const throttled = yield* graphql(emu, access_token, q)
      expect(throttled.json.errors[0].extensions.code).toBe("THROTTLED")
      expect(throttled.json.data).toBeUndefined()
      expect(throttled.json.extensions.cost.requestedQueryCost).toBe(301)
      expect(throttled.json.extensions.cost.actualQueryCost).toBe(0)
      const after = (yield* graphql(emu, access_token, q)).json
      expect(after.errors[0].extensions.code).toBe("THROTTLED")
      expect(after.extensions.cost.throttleStatus.currentlyAvailable).toBeGreaterThanOrEqual(throttled.json.extensions.cost.throttleStatus.currentlyAvailable)
      const needed = Math.ceil((301 - after.extensions.cost.throttleStatus.currentlyAvailable) / 50)
      yield* emu.admin.advanceClock({ seconds: needed })
      const ok = yield* graphql(emu, access_token, q)
      expect(ok.json.data.jobs.nodes).toHaveLength(100)
      // restoration is capped at maximumAvailable
      yield* emu.admin.advanceClock({ seconds: 3600 - needed - 5 })
      const full = (yield* graphql(emu, access_token, ACCOUNT_QUERY)).json.extensions.cost.throttleStatus
      expect(full.currentlyAvailable).toBe(1000 - 3)
    })
  )

  it.scopedLive("past the request-rate guard the endpoint answers 429 with Retry-After; the window slides on the emulator clock", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ limits: { requestLimit: 5, requestWindowSeconds: 60 } })
      const { access_token } = yield* connect(emu)
      for (let i = 0; i < 5; i++) expect((yield* graphql(emu, access_token, ACCOUNT_QUERY)).status).toBe(200)
      const limited = yield* graphql(emu, access_token, ACCOUNT_QUERY)
      expect(limited.status).toBe(429)
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(limited.json.errors[0].extensions.code).toBe("TOO_MANY_REQUESTS")
      yield* emu.admin.advanceClock({ seconds: retryAfter })
      expect((yield* graphql(emu, access_token, ACCOUNT_QUERY)).status).toBe(200)
      expect((yield* emu.admin.stats()).rateLimited).toBe(1)
    })
  )

  it.scopedLive("first above maxPageSize is a query error; setLimits per app and account changes it", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 300 })
      const { access_token } = yield* connect(emu)
      const res = yield* graphql(emu, access_token, pageQuery("first: 101"))
      expect(res.json.errors[0].extensions.code).toBe("MAX_PAGE_SIZE_EXCEEDED")
      expect(res.json.data).toBeNull()
      yield* emu.admin.setLimits({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId, maxPageSize: 250, maxPoints: 100_000 })
      const ok = yield* graphql(emu, access_token, pageQuery("first: 250"))
      expect(ok.json.data.jobs.nodes).toHaveLength(250)
      expect(ok.json.extensions.cost.throttleStatus.maximumAvailable).toBe(100_000)
    })
  )
})

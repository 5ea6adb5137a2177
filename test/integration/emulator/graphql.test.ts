import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { parse as gql, print } from "graphql"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { makeTestEmulator, type TestEmulatorShape } from "../../support/emulator.js"
import { aliases, clients, definitions, scopesOf } from "../../../src/emulator/data/definitions.js"
import { ACCOUNT_QUERY, connect, graphql, jwtPayload } from "../../support/emulatorClient.js"

/** The fields of the emulator's own listing of jobs these tests compare with what GraphQL serves. */
const ListedJob = Schema.Struct({ id: Schema.String, jobNumber: Schema.Number, title: Schema.NullOr(Schema.String), createdAt: Schema.String, updatedAt: Schema.String })
const listedJobs = (emu: TestEmulatorShape, accountId: string) =>
  Effect.flatMap(emu.admin.listRecords({ accountId, collection: "jobs" }), Schema.decodeUnknown(Schema.Array(ListedJob)))

const pageQuery = (args: string, fields = "id jobNumber") =>
  `{ jobs(${args}) { nodes { ${fields} } pageInfo { hasNextPage endCursor hasPreviousPage startCursor } } }`

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

describe("GraphQL endpoint: jobs", () => {
  it.scopedLive("pages cover every job once in creation order; pageInfo is exact; cursors are stable under inserts", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 25 })
      const { access_token } = yield* connect(emu)
      const seen: Array<number> = []
      let after: string | null = null
      let pages = 0
      for (;;) {
        const res: { json: any } = yield* graphql(emu, access_token, pageQuery(`first: 10${after ? `, after: "${after}"` : ""}`))
        const jobs = res.json.data.jobs
        seen.push(...jobs.nodes.map((n: { jobNumber: number }) => n.jobNumber))
        expect(jobs.pageInfo.hasPreviousPage).toBe(pages > 0)
        pages++
        if (pages === 1) yield* emu.admin.createRecords({ accountId: emu.accounts[0]!.accountId, collection: "jobs", count: 5 }) // inserted mid-pagination
        if (!jobs.pageInfo.hasNextPage) {
          expect(jobs.pageInfo.endCursor).toEqual(jobs.nodes.length ? expect.any(String) : null)
          break
        }
        after = jobs.pageInfo.endCursor
      }
      expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
      expect(pages).toBe(3)
      const exact = yield* graphql(emu, access_token, pageQuery("first: 30"))
      expect(exact.json.data.jobs.pageInfo.hasNextPage).toBe(false)
      const empty = yield* graphql(emu, access_token, pageQuery(`first: 5, after: "${exact.json.data.jobs.pageInfo.endCursor}"`))
      expect(empty.json.data.jobs.nodes).toEqual([])
      expect(empty.json.data.jobs.pageInfo).toMatchObject({ hasNextPage: false, endCursor: null, hasPreviousPage: true })
    })
  )

  it.scopedLive("deleted jobs are no longer served; edited jobs move to the end of UPDATED_AT order with updatedAt = now", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 20 })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu)
      const { ids: deleted } = yield* emu.admin.deleteRecords({ accountId, collection: "jobs", count: 3, seed: 5 })
      yield* emu.admin.advanceClock({ seconds: 120 })
      const before = yield* emu.admin.clock()
      const { ids: edited } = yield* emu.admin.editRecords({ accountId, collection: "jobs", count: 2, seed: 9 })
      const after = yield* emu.admin.clock()
      const all = (yield* graphql(emu, access_token, pageQuery("first: 100", "id title updatedAt"))).json.data.jobs.nodes
      expect(all).toHaveLength(17)
      for (const id of deleted) expect(all.find((n: { id: string }) => n.id === id)).toBeUndefined()
      const byUpdate = (yield* graphql(emu, access_token, pageQuery("first: 100, sort: [{key: UPDATED_AT, direction: DESCENDING}]", "id updatedAt"))).json.data.jobs.nodes
      expect(new Set(byUpdate.slice(0, 2).map((n: { id: string }) => n.id))).toEqual(new Set(edited))
      // the service's clock at the edit, to the second (it runs on: the edit happened between the two readings)
      const editedAt = Date.parse(byUpdate[0].updatedAt)
      expect(editedAt).toBeGreaterThanOrEqual(Math.floor(before.nowMs / 1000) * 1000)
      expect(editedAt).toBeLessThanOrEqual(Math.floor(after.nowMs / 1000) * 1000)
      // listRecords serves exactly what GraphQL serves
      const listed = yield* listedJobs(emu, accountId)
      expect(listed.map((j) => [j.id, j.title, j.updatedAt])).toEqual(all.map((n: { id: string; title: string; updatedAt: string }) => [n.id, n.title, n.updatedAt]))
    })
  )

  it.scopedLive("sorts: UPDATED_AT and JOB_NUMBER in both directions are total orders (id tie-breaker) and paginate without gaps", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 57 })
      const { access_token } = yield* connect(emu)
      const listed = yield* listedJobs(emu, emu.accounts[0]!.accountId)
      for (const [key, direction] of [["UPDATED_AT", "ASCENDING"], ["UPDATED_AT", "DESCENDING"], ["JOB_NUMBER", "ASCENDING"], ["JOB_NUMBER", "DESCENDING"]] as const) {
        const got: Array<{ jobNumber: number; updatedAt: string }> = []
        let after: string | null = null
        do {
          const res: { json: any } = yield* graphql(emu, access_token, pageQuery(`first: 10, sort: [{key: ${key}, direction: ${direction}}]${after ? `, after: "${after}"` : ""}`, "jobNumber updatedAt"))
          got.push(...res.json.data.jobs.nodes)
          after = res.json.data.jobs.pageInfo.hasNextPage ? res.json.data.jobs.pageInfo.endCursor : null
        } while (after)
        const sign = direction === "ASCENDING" ? 1 : -1
        const expected = [...listed].sort((a, b) =>
          key === "JOB_NUMBER" ? sign * (a.jobNumber - b.jobNumber) : sign * (Date.parse(a.updatedAt) - Date.parse(b.updatedAt)) || a.jobNumber - b.jobNumber
        )
        expect(got.map((j) => j.jobNumber), `${key} ${direction}`).toEqual(expected.map((j) => j.jobNumber))
      }
    })
  )

  it.scopedLive("filter createdAt { after, before, eq } selects by creation time", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 40 })
      const { access_token } = yield* connect(emu)
      const listed = yield* listedJobs(emu, emu.accounts[0]!.accountId)
      const pivot = listed[15]!.createdAt
      const end = listed[30]!.createdAt
      const q = (filter: string) => graphql(emu, access_token, `{ jobs(first: 100, filter: { createdAt: ${filter} }) { nodes { jobNumber createdAt } totalCount } }`)
      const after = (yield* q(`{ after: "${pivot}" }`)).json.data.jobs
      expect(after.nodes.map((n: { jobNumber: number }) => n.jobNumber)).toEqual(listed.filter((j) => j.createdAt > pivot).map((j) => j.jobNumber))
      expect(after.totalCount).toBe(after.nodes.length)
      const between = (yield* q(`{ after: "${pivot}", before: "${end}" }`)).json.data.jobs.nodes
      expect(between.map((n: { jobNumber: number }) => n.jobNumber)).toEqual(listed.filter((j) => j.createdAt > pivot && j.createdAt < end).map((j) => j.jobNumber))
      const eq = (yield* q(`{ eq: "${pivot}" }`)).json.data.jobs.nodes
      expect(eq.map((n: { jobNumber: number }) => n.jobNumber)).toEqual(listed.filter((j) => j.createdAt === pivot).map((j) => j.jobNumber))
      const bad = (yield* q(`{ after: "yesterday" }`)).json
      expect(bad.errors[0].extensions.code).toBe("INVALID_ARGUMENT")
    })
  )

  it.scopedLive("unsupported arguments, filter fields and sort keys are refused with ARGUMENT_NOT_SUPPORTED, never ignored", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 5 })
      const { access_token } = yield* connect(emu)
      const cases: Array<[string, string]> = [
        ["first: 2, before: \"x\"", "before"],
        ["last: 2", "last"],
        ["first: 2, searchTerm: \"lawn\"", "searchTerm"],
        ["first: 2, filter: { visitsAssignedToUserId: \"x\" }", "filter.visitsAssignedToUserId"],
        ["first: 2, sort: [{key: SCHEDULE, direction: ASCENDING}]", "sort.key SCHEDULE"]
      ]
      for (const [args, name] of cases) {
        const res = yield* graphql(emu, access_token, pageQuery(args))
        expect(res.json.data).toBeNull()
        expect(res.json.errors[0]).toMatchObject({ message: `argument ${name} of \`jobs\` is not supported by the emulator`, extensions: { code: "ARGUMENT_NOT_SUPPORTED" } })
      }
      // keyset cursors remember their order; offset cursors (the default) are positions in any order
      yield* emu.admin.setCursorMode({ mode: "keyset" })
      const otherSort = (yield* graphql(emu, access_token, pageQuery("first: 2, sort: [{key: UPDATED_AT, direction: DESCENDING}]"))).json.data.jobs
      const mismatch = yield* graphql(emu, access_token, pageQuery(`first: 2, after: "${otherSort.pageInfo.endCursor}"`))
      expect(mismatch.json.errors[0].extensions.code).toBe("INVALID_CURSOR")
      const garbage = yield* graphql(emu, access_token, pageQuery(`first: 2, after: "garbage"`))
      expect(garbage.json.errors[0].extensions.code).toBe("INVALID_CURSOR")
    })
  )

  it.scopedLive("every scalar field of Job resolves with the schema's types, and client { id name }", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 300 })
      const { access_token } = yield* connect(emu)
      const fields = `id jobNumber title createdAt updatedAt allowReviewRequest billingType bookingConfirmationSentAt
        completedAndUninvoicedVisitsCount completedAndUninvoicedVisitsTotal completedAt defaultVisitTitle endAt instructions
        invoicedTotal jobStatus jobType jobberWebUri nextDateToSendReviewSms pendingInvoiceStartsAt readyToClose source startAt
        total uninvoicedTotal visitGenerationInProgress visitReschedulingInProgress willClientBeAutomaticallyCharged client { id name firstName lastName }`
      yield* emu.admin.setLimits({ maxPoints: 1_000_000 })
      const res = yield* graphql(emu, access_token, `{ jobs(first: 100) { nodes { ${fields} } } }`)
      expect(res.json.errors).toBeUndefined()
      const nodes = res.json.data.jobs.nodes as Array<Record<string, unknown>>
      const listed = yield* emu.admin.listRecords({ accountId: emu.accounts[0]!.accountId, collection: "jobs" })
      const { client: _client, ...first } = nodes[0]!
      expect(first).toEqual(Object.fromEntries(Object.keys(first).map((field) => [field, listed[0]![field]])))
      for (const n of nodes) {
        expect(n.updatedAt! >= n.createdAt!).toBe(true)
        expect(n.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
        expect(typeof n.total).toBe("number")
      }
      // realistic variety: some null/empty titles and some non-ASCII ones over a larger sample
      const titles = (yield* listedJobs(emu, emu.accounts[0]!.accountId)).map((j) => j.title)
      expect(titles.some((t) => t === null || t === "")).toBe(true)
      expect(titles.some((t) => t !== null && /[^\x00-\x7f]/.test(t))).toBe(true)
    })
  )
})

describe("GraphQL endpoint: headers and scopes", () => {
  it.scopedLive("X-SERVICE-GRAPHQL-VERSION: a malformed or impossible date is refused with 400 naming the header; absent is accepted", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { access_token } = yield* connect(emu)
      for (const version of ["2025-1-20", "latest", "2025-02-30", "20250120"]) {
        const res = yield* graphql(emu, access_token, ACCOUNT_QUERY, { headers: { "X-SERVICE-GRAPHQL-VERSION": version } })
        expect(res.status).toBe(400)
        expect(res.json.errors[0].message).toContain("X-SERVICE-GRAPHQL-VERSION")
      }
      const absent = yield* graphql(emu, access_token, ACCOUNT_QUERY, { headers: { "X-SERVICE-GRAPHQL-VERSION": "" } })
      expect(absent.status).toBe(400)
      const none = yield* Effect.promise(() =>
        fetch(`${emu.baseUrl}/api/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
          body: JSON.stringify({ query: ACCOUNT_QUERY })
        })
      )
      expect(none.status).toBe(200)
    })
  )

  it.scopedLive("scopes are those granted at authorization: a later scope change does not widen existing tokens", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 2, scopes: ["read_clients"] })
      const old = yield* connect(emu)
      yield* emu.admin.updateApp({ clientId: emu.app.clientId, scopes: ["read_jobs"] })
      expect((yield* graphql(emu, old.access_token, "{ jobs(first: 1) { nodes { id } } }")).json.errors[0].extensions.code).toBe("ACCESS_DENIED")
      const fresh = yield* connect(emu)
      expect((yield* graphql(emu, fresh.access_token, "{ jobs(first: 1) { nodes { id } } }")).json.data.jobs.nodes).toHaveLength(1)
      const clients = yield* graphql(emu, fresh.access_token, "{ clients(first: 1) { nodes { id } } }")
      expect(clients.json.errors[0].extensions).toMatchObject({ code: "ACCESS_DENIED", scope: "read_clients" })
    })
  )

  it.scopedLive("each collection (and its alias) needs the scope its definition names; an app asks for every collection's scope by default", () =>
    Effect.gen(function* () {
      const all = scopesOf(definitions)
      const emu = yield* makeTestEmulator({ jobs: 2 })
      expect(jwtPayload((yield* connect(emu)).access_token).scope.split(" ").sort()).toEqual([...all].sort())
      const rootFields = [...definitions.map((d) => [d.name, d.scope] as const), ...Object.entries(aliases).map(([alias, name]) => [alias, definitions.find((d) => d.name === name)!.scope] as const)]
      for (const [field, scope] of rootFields) {
        yield* emu.admin.updateApp({ clientId: emu.app.clientId, scopes: all.filter((s) => s !== scope) })
        const denied = yield* graphql(emu, (yield* connect(emu)).access_token, `{ ${field}(first: 1) { nodes { id } } }`)
        expect(denied.json.errors?.[0]?.extensions, field).toEqual({ code: "ACCESS_DENIED", scope })
        yield* emu.admin.updateApp({ clientId: emu.app.clientId, scopes: [scope] })
        const allowed = yield* graphql(emu, (yield* connect(emu)).access_token, `{ ${field}(first: 1) { nodes { id } } }`)
        expect(allowed.json.errors, field).toBeUndefined()
      }
    })
  )

  it.scopedLive("a collection defined elsewhere brings its own scope: enforced, and asked for by default", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 2, definitions: [{ ...clients, scope: "read_leads" }] })
      const tokens = yield* connect(emu)
      expect(jwtPayload(tokens.access_token).scope.split(" ")).toContain("read_leads")
      expect((yield* graphql(emu, tokens.access_token, "{ clients(first: 1) { nodes { id } } }")).json.errors).toBeUndefined()
      yield* emu.admin.updateApp({ clientId: emu.app.clientId, scopes: ["read_clients"] })
      const denied = yield* graphql(emu, (yield* connect(emu)).access_token, "{ clients(first: 1) { nodes { id } } }")
      expect(denied.json.errors[0].extensions).toEqual({ code: "ACCESS_DENIED", scope: "read_leads" })
    })
  )
})

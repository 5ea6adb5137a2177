import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { makeTestEmulator, type TestEmulatorShape } from "../../support/emulator.js"
import { connect, graphql, pageQuery } from "../../support/emulatorClient.js"

/** The fields of the emulator's own listing of jobs these tests compare with what GraphQL serves. */
const ListedJob = Schema.Struct({ id: Schema.String, jobNumber: Schema.Number, title: Schema.NullOr(Schema.String), createdAt: Schema.String, updatedAt: Schema.String })
const listedJobs = (emu: TestEmulatorShape, accountId: string) =>
  Effect.flatMap(emu.admin.listRecords({ accountId, collection: "jobs" }), Schema.decodeUnknown(Schema.Array(ListedJob)))

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

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"
import { connect, graphql } from "../../support/emulatorClient.js"

const jobsPage = (args: string) =>
  `{ jobs(${args}) { nodes { id lineItems(first: 100) { nodes { id } pageInfo { hasNextPage } totalCount } } pageInfo { hasNextPage endCursor } totalCount } }`

interface JobsPage {
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly lineItems: { readonly nodes: ReadonlyArray<{ readonly id: string }>; readonly pageInfo: { readonly hasNextPage: boolean }; readonly totalCount: number } }>
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null }
  readonly totalCount: number
}

describe("paging faults (setPagingFaults)", () => {
  it.scopedLive("withhold: the same share of nodes left out of every page, lookup and line item connection; pageInfo and totalCount as paged", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 300, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu)
      const page = (args: string) => Effect.map(graphql(emu, access_token, jobsPage(args)), (r) => r.json.data.jobs as JobsPage)
      const all = (yield* emu.admin.listRecords({ accountId, collection: "jobs" })).map((r) => String(r.id))

      yield* emu.admin.setPagingFaults({ accountId, withhold: 0.3, seed: 7 })
      const first = yield* page("first: 100, offset: 0")
      // fewer than first, yet the list goes on, and the count is the list's
      expect(first.nodes.length).toBeLessThan(100)
      expect(first.nodes.length).toBeGreaterThan(50)
      expect(first.pageInfo.hasNextPage).toBe(true)
      expect(first.totalCount).toBe(300)
      // the end cursor is the 100th row's, withheld or not (offset cursors: its 1-based position)
      expect(Buffer.from(first.pageInfo.endCursor!, "base64").toString()).toBe("100")
      // the nodes returned are the rows of positions 0-99 less the withheld ones, in order
      const shown = first.nodes.map((n) => n.id)
      expect(all.slice(0, 100).filter((id) => shown.includes(id))).toEqual(shown)

      // the same nodes are withheld wherever they are asked: another page size, a lookup by id
      const again = yield* page("first: 37, offset: 0")
      expect(again.nodes.map((n) => n.id)).toEqual(all.slice(0, 37).filter((id) => shown.includes(id)))
      const hidden = all.slice(0, 100).filter((id) => !shown.includes(id))
      const lookup = yield* page(`first: 100, offset: 0, filter: { ids: ${JSON.stringify([...hidden.slice(0, 3), shown[0]])} }`)
      expect(lookup.nodes.map((n) => n.id)).toEqual([shown[0]])
      expect(lookup.totalCount).toBe(4)

      // line items: some withheld too, their connection's pageInfo and count as paged
      const listed = yield* emu.admin.listRecords({ accountId, collection: "jobs" })
      const items = new Map(listed.map((r) => [String(r.id), (r.lineItems as ReadonlyArray<{ id: string }>).map((i) => i.id)]))
      let itemsWithheld = 0
      for (const job of first.nodes) {
        const want = items.get(job.id)!
        expect(job.lineItems.totalCount).toBe(want.length)
        expect(job.lineItems.pageInfo.hasNextPage).toBe(false)
        expect(want.filter((id) => job.lineItems.nodes.some((n) => n.id === id))).toEqual(job.lineItems.nodes.map((n) => n.id))
        itemsWithheld += want.length - job.lineItems.nodes.length
      }
      expect(itemsWithheld).toBeGreaterThan(0)

      // the admin listing as the app is served: exactly what its pages return
      const served = yield* emu.admin.listRecords({ accountId, collection: "jobs", servedTo: emu.app.clientId })
      let paged: Array<string> = []
      for (let offset = 0; ; offset += 100) {
        const p = yield* page(`first: 100, offset: ${offset}`)
        paged = [...paged, ...p.nodes.map((n) => n.id)]
        if (!p.pageInfo.hasNextPage) break
      }
      expect(served.map((r) => String(r.id))).toEqual(paged)
      expect(paged.length).toBeLessThan(300)
      const firstServed = served.find((r) => r.id === first.nodes[0]!.id)!
      expect((firstServed.lineItems as ReadonlyArray<{ id: string }>).map((i) => i.id)).toEqual(first.nodes[0]!.lineItems.nodes.map((n) => n.id))

      // {} restores whole pages
      yield* emu.admin.setPagingFaults({ accountId })
      expect((yield* page("first: 100, offset: 0")).nodes).toHaveLength(100)
    })
  )

  it.scopedLive("withholdBlock, withholdChildren, and a withheld set that moves with the seed: as the app's pages and lookups are served", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 400, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu)
      const page = (args: string) => Effect.map(graphql(emu, access_token, jobsPage(args)), (r) => r.json.data.jobs as JobsPage)
      const listed = yield* emu.admin.listRecords({ accountId, collection: "jobs" })
      const all = listed.map((r) => String(r.id))
      const served = () => Effect.map(emu.admin.listRecords({ accountId, collection: "jobs", servedTo: emu.app.clientId }), (rs) => rs)

      // a block of 130 consecutive jobs from position 120: the page inside it is empty, the list goes on, the count is whole
      yield* emu.admin.setPagingFaults({ accountId, withholdBlock: 130, blockStart: 120 })
      const inside = yield* page("first: 100, offset: 140")
      expect(inside.nodes).toEqual([])
      expect(inside.pageInfo.hasNextPage).toBe(true)
      expect(inside.totalCount).toBe(400)
      expect((yield* served()).map((r) => String(r.id))).toEqual([...all.slice(0, 120), ...all.slice(250)])
      // by id too: a withheld job is counted, not returned
      const lookup = yield* page(`first: 10, offset: 0, filter: { ids: ${JSON.stringify([all[130], all[10]])} }`)
      expect(lookup.nodes.map((n) => n.id)).toEqual([all[10]])
      expect(lookup.totalCount).toBe(2)
      // line items untouched by a block alone
      const firstPage = yield* page("first: 100, offset: 0")
      for (const job of firstPage.nodes) expect(job.lineItems.nodes.length).toBe(job.lineItems.totalCount)
      // the block's start drawn from the seed when not given: the same for the same seed
      yield* emu.admin.setPagingFaults({ accountId, withholdBlock: 50, seed: 3 })
      const drawnOnce = (yield* served()).map((r) => String(r.id))
      yield* emu.admin.setPagingFaults({ accountId, withholdBlock: 50, seed: 3 })
      expect((yield* served()).map((r) => String(r.id))).toEqual(drawnOnce)
      expect(drawnOnce).toHaveLength(350)

      // withheld children only: every job served, a share of line items left out (their connection counts them)
      yield* emu.admin.setPagingFaults({ accountId, withholdChildren: 0.3, seed: 5 })
      const withItems = yield* page("first: 100, offset: 0")
      expect(withItems.nodes).toHaveLength(100)
      const itemsLeftOut = withItems.nodes.reduce((n, job) => n + job.lineItems.totalCount - job.lineItems.nodes.length, 0)
      expect(itemsLeftOut).toBeGreaterThan(0)
      const servedItems = new Map((yield* served()).map((r) => [String(r.id), (r.lineItems as ReadonlyArray<{ id: string }>).map((i) => i.id)]))
      for (const job of withItems.nodes) expect(job.lineItems.nodes.map((n) => n.id)).toEqual(servedItems.get(job.id))

      // a share withheld with one seed, then another: some jobs become withheld, others visible again
      yield* emu.admin.setPagingFaults({ accountId, withhold: 0.2, seed: 1 })
      const before = new Set((yield* served()).map((r) => String(r.id)))
      yield* emu.admin.setPagingFaults({ accountId, withhold: 0.2, seed: 2 })
      const after = new Set((yield* served()).map((r) => String(r.id)))
      expect(all.filter((id) => before.has(id) && !after.has(id)).length).toBeGreaterThan(10)
      expect(all.filter((id) => !before.has(id) && after.has(id)).length).toBeGreaterThan(10)

      const refused = yield* Effect.flip(emu.admin.setPagingFaults({ withholdBlock: -1 }))
      expect(refused.reason).toBe("setPagingFaults: withholdBlock must be a whole number >= 0, got -1")
    })
  )

  it.scopedLive("ignoreOffset: every page asked by position is the first; after a cursor still pages; scoped per account or per app", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 50, accounts: 2, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } })
      const [one, two] = emu.accounts
      const tokenOne = (yield* connect(emu, one!.accountId)).access_token
      const tokenTwo = (yield* connect(emu, two!.accountId)).access_token
      const ids = (token: string, args: string) => Effect.map(graphql(emu, token, jobsPage(args)), (r) => (r.json.data.jobs as JobsPage).nodes.map((n) => n.id))

      yield* emu.admin.setPagingFaults({ accountId: one!.accountId, ignoreOffset: true })
      const start = yield* ids(tokenOne, "first: 10, offset: 0")
      expect(yield* ids(tokenOne, "first: 10, offset: 20")).toEqual(start)
      const cursor = Buffer.from("20").toString("base64")
      expect(yield* ids(tokenOne, `first: 10, after: "${cursor}"`)).not.toEqual(start)
      // the other account is served as before
      const other = yield* ids(tokenTwo, "first: 10, offset: 0")
      expect(yield* ids(tokenTwo, "first: 10, offset: 20")).not.toEqual(other)

      // per app: every account this app reads; an account's own settings win
      yield* emu.admin.setPagingFaults({ clientId: emu.app.clientId, ignoreOffset: true })
      expect(yield* ids(tokenTwo, "first: 10, offset: 20")).toEqual(other)
      yield* emu.admin.setPagingFaults({ accountId: two!.accountId })
      expect(yield* ids(tokenTwo, "first: 10, offset: 20")).not.toEqual(other)

      const refused = yield* Effect.flip(emu.admin.setPagingFaults({ withhold: 1 }))
      expect(refused.reason).toBe("setPagingFaults: withhold must be a share of nodes from 0 up to (not including) 1, got 1")
      const both = yield* Effect.flip(emu.admin.setPagingFaults({ clientId: emu.app.clientId, accountId: one!.accountId, withhold: 0.1 }))
      expect(both.reason).toBe("setPagingFaults: give clientId (one app) or accountId (one account), not both")
    })
  )
})

import { expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import type { RecordDefinition } from "../../../src/emulator/data/RecordDefinition.js"
import { Emulator } from "../../../src/emulator/Emulator.js"
import type { ListedRecord } from "../../../src/emulator/EmulatorAdmin.js"
import { definitions } from "../../../src/emulator/data/definitions.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"

layer(EmulatorTest({ jobs: 60 }))("generic collections", (it) => {
  it.effect("records created or deleted in any collection move no link and no line item of the records already there", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const before = new Map<string, ReadonlyArray<ListedRecord>>()
      for (const d of definitions) {
        before.set(d.name, yield* admin.listRecords({ accountId, collection: d.name }))
        // an empty listing would make every comparison below hold
        expect(before.get(d.name)!.length, d.name).toBeGreaterThan(0)
      }
      let seed = 1
      const created = new Map<string, ReadonlyArray<string>>()
      for (const d of definitions) created.set(d.name, (yield* admin.createRecords({ accountId, collection: d.name, count: 5, seed: ++seed })).ids)
      // clients that jobs, visits, quotes, invoices, requests and properties link to
      const deleted = (yield* admin.deleteRecords({ accountId, collection: "clients", ids: before.get("clients")!.slice(0, 2).map((c) => c.id) })).ids
      expect(deleted).toHaveLength(2)
      for (const d of definitions) {
        const after = new Map((yield* admin.listRecords({ accountId, collection: d.name })).map((r) => [r.id, r]))
        const kept = before.get(d.name)!.filter((r) => !deleted.includes(r.id))
        expect([...after.keys()].sort(), d.name).toEqual([...kept.map((r) => r.id), ...created.get(d.name)!].sort())
        // links (a job's client, a visit's job...) and line items (their product) are drawn when a record is created
        for (const record of kept) expect(after.get(record.id), `${d.name} ${record.id}`).toEqual(record)
      }
      const links = before.get("jobs")!.map((j) => (j.client as { id: string } | null)?.id)
      expect(links.some((id) => id !== undefined && deleted.includes(id)), "a job links to a deleted client").toBe(true)
    })
  )

  it.effect("listRecords with ids: those records exactly as the full listing has them, in its order; unknown and deleted ids left out", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const all = yield* admin.listRecords({ accountId, collection: "visits" })
      const [gone, ...rest] = [all[7]!, all[3]!, all[12]!, all[3]!]
      yield* admin.deleteRecords({ accountId, collection: "visits", ids: [gone.id] })
      const some = yield* admin.listRecords({ accountId, collection: "visits", ids: [gone.id, ...rest.map((r) => r.id), "Z2lkOi8vc2VydmljZS9WaXNpdC85OTk5OTk5"] })
      expect(some).toEqual([all[3], all[12]])
      expect(yield* admin.listRecords({ accountId, collection: "visits", ids: [] })).toEqual([])
    })
  )
})

/** Every client a lead with a name of its own: another data set at the `clients` root field. */
const leads: RecordDefinition = {
  name: "clients",
  scope: "read_clients",
  nodeType: "Client",
  size: () => 7,
  fields: (input) => ({ firstName: "Lead", lastName: String(input.index), name: `Lead ${input.index}`, isLead: true, companyName: null, isCompany: false })
}

it.effect("definitions replace the data set of a root field in every account", () =>
  Effect.scoped(
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ definitions: [leads] })
      const account = yield* emulator.admin.createAccount({ jobs: 30 })
      const clients = yield* emulator.admin.listRecords({ accountId: account.accountId, collection: "clients" })
      expect(clients.map((c) => [c.name, c.isLead])).toEqual(Array.from({ length: 7 }, (_, i) => [`Lead ${i}`, true]))
      // the other collections are the defaults, linked to these clients
      const jobs = yield* emulator.admin.listRecords({ accountId: account.accountId, collection: "jobs" })
      expect(jobs).toHaveLength(30)
      const ids = new Set(clients.map((c) => c.id))
      for (const job of jobs) expect(ids.has((job.client as { id: string }).id)).toBe(true)
    })
  )
)

it.effect("a definition must be served at a root field of the schema that lists its node type", () =>
  Effect.gen(function* () {
    for (const [def, message] of [
      [{ ...leads, name: "leads" }, "emulator: collection leads: the schema subset has no root field `leads` to serve it at"],
      [{ ...leads, nodeType: "Job" }, "emulator: collection clients: its root field lists ClientConnection, not JobConnection"]
    ] as const) {
      const exit = yield* Effect.exit(Effect.scoped(Emulator.make({ definitions: [def] })))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(message)
    }
  })
)

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"

const collections = ["jobs", "visits", "invoices", "quotes", "properties", "requests", "clients"]

describe("emulator data", () => {
  it.scoped("a record's links and its line items' products stay as they were when other collections grow or shrink", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 60 })
      const accountId = emu.accounts[0]!.accountId
      const snapshot = Effect.forEach(collections, (c) => emu.admin.listRecords({ accountId, collection: c })).pipe(
        Effect.map((lists) => lists.map((records) => new Map(records.map((r) => [String(r.id), JSON.stringify(r)]))))
      )
      const before = yield* snapshot
      // records created later link to what existed then, and change nothing of the records already there
      let seed = 1
      for (const c of ["clients", "properties", "quotes", "requests", "users", "products", "jobs", "invoices"]) yield* emu.admin.createRecords({ accountId, collection: c, count: 5, seed: ++seed })
      const deleted = (yield* emu.admin.deleteRecords({ accountId, collection: "clients", ids: [...before[6]!.keys()].slice(0, 2) })).ids
      const after = yield* snapshot
      for (let k = 0; k < collections.length; k++) {
        // every record that was there is exactly as it was (the deleted ones are gone)
        const still = [...before[k]!.keys()].filter((id) => !deleted.includes(id))
        expect(still.map((id) => after[k]!.get(id)), collections[k]).toEqual(still.map((id) => before[k]!.get(id)))
      }
    })
  )
})

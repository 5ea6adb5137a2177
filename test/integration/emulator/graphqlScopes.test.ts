import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"
import { aliases, clients, definitions, scopesOf } from "../../../src/emulator/data/definitions.js"
import { ACCOUNT_QUERY, connect, graphql, jwtPayload } from "../../support/emulatorClient.js"

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

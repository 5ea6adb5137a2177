import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"
import { ACCOUNT_QUERY, authorize, connect, exchange, graphql, refresh } from "../../support/emulatorClient.js"

// One test per row of SERVICE_SPEC.md "Errors", driven over HTTP.

describe("errors table", () => {
  it.scopedLive("Access token invalid or expired at the GraphQL endpoint -> HTTP 401 Invalid Token Error", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      const expected = { errors: [{ message: "Invalid Token Error", extensions: { code: "UNAUTHENTICATED" } }] }
      const [head, payload, sig] = tokens.access_token.split(".")
      const tampered = `${head}.${payload}.${sig!.slice(0, -2)}${sig!.endsWith("AA") ? "BB" : "AA"}`
      for (const token of [undefined, "not-a-jwt", tampered]) {
        const res = yield* graphql(emu, token, ACCOUNT_QUERY)
        expect(res.status).toBe(401)
        expect(res.json).toEqual(expected)
      }
      yield* emu.admin.advanceClock({ seconds: 3600 })
      const expired = yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)
      expect(expired.status).toBe(401)
      expect(expired.json).toEqual(expected)
    })
  )

  it.scopedLive("Invalid PKCE code verifier at code exchange -> HTTP 400 invalid_grant", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { code, verifier } = yield* authorize(emu)
      const wrong = yield* exchange(emu, code, { code_verifier: "x".repeat(43) })
      expect(wrong.status).toBe(400)
      expect(wrong.json.error).toBe("invalid_grant")
      const missing = yield* exchange(emu, code)
      expect(missing.status).toBe(400)
      expect(missing.json.error).toBe("invalid_grant")
      // a refused verifier does not consume the code
      expect((yield* exchange(emu, code, { code_verifier: verifier })).status).toBe(200)
    })
  )

  it.scopedLive("Old client secret after regeneration used at the token endpoint -> authentication fails (401 invalid_client)", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const pending = yield* authorize(emu)
      yield* emu.admin.regenerateSecret({ clientId: emu.app.clientId })
      const res = yield* exchange(emu, pending.code, { code_verifier: pending.verifier })
      expect(res.status).toBe(401)
      expect(res.json.error).toBe("invalid_client")
      expect(res.json.error_description).not.toContain(emu.app.clientSecret)
    })
  )

  it.scopedLive("Request-level GraphQL failures (throttling, invalid arguments) -> the response has an errors array", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 5, limits: { maxPoints: 50 } })
      const tokens = yield* connect(emu)
      const invalid = yield* graphql(emu, tokens.access_token, "{ jobs(first: 5, searchTerm: \"x\") { nodes { id } } }")
      expect(invalid.status).toBe(200)
      expect(invalid.json.errors[0].extensions.code).toBe("ARGUMENT_NOT_SUPPORTED")
      expect(invalid.json.errors[0].message).toBe("argument searchTerm of `jobs` is not supported by the emulator")
      const throttled = yield* graphql(emu, tokens.access_token, "{ jobs(first: 100) { nodes { id } } }")
      expect(throttled.status).toBe(200)
      expect(throttled.json.errors).toEqual([{ message: "Throttled", extensions: { code: "THROTTLED" } }])
      expect(throttled.json.data).toBeUndefined()
      const unknownField = yield* graphql(emu, tokens.access_token, "{ jobs(first: 1) { nodes { nope } } }")
      expect(unknownField.json.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED")
    })
  )

  it.scopedLive("Mutation-level failures (appDisconnect) -> reported in userErrors, each with a message", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      // the refresh token dies but the access token lives on: the app is already disconnected when it calls
      yield* emu.admin.automaticDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId, reason: "churn" })
      const res = yield* graphql(emu, tokens.access_token, "mutation { appDisconnect { app { name } userErrors { message path } } }")
      expect(res.status).toBe(200)
      expect(res.json.errors).toBeUndefined()
      expect(res.json.data.appDisconnect.userErrors).toEqual([{ message: expect.stringContaining("not connected"), path: ["appDisconnect"] }])
    })
  )

  it.scopedLive("Missing scope -> no data and a permission error naming the scope", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ jobs: 3, scopes: ["read_clients"] })
      const tokens = yield* connect(emu)
      const res = yield* graphql(emu, tokens.access_token, "{ jobs(first: 3) { nodes { id } } }")
      expect(res.status).toBe(200)
      expect(res.json.data).toBeNull()
      expect(res.json.errors).toHaveLength(1)
      expect(res.json.errors[0].extensions).toEqual({ code: "ACCESS_DENIED", scope: "read_jobs" })
      expect(res.json.errors[0].message).toContain("read_jobs")
      expect(res.json.errors[0].path).toEqual(["jobs"])
      // account works with any scope set
      expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).json.data.account.id).toBe(emu.accounts[0]!.accountId)
    })
  )

  it.scopedLive("Expired or reused authorization code -> the exchange fails (400 invalid_grant)", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const a = yield* authorize(emu)
      expect((yield* exchange(emu, a.code, { code_verifier: a.verifier })).status).toBe(200)
      const reused = yield* exchange(emu, a.code, { code_verifier: a.verifier })
      expect([reused.status, reused.json.error]).toEqual([400, "invalid_grant"])
      const b = yield* authorize(emu)
      yield* emu.admin.advanceClock({ seconds: 601 })
      const expired = yield* exchange(emu, b.code, { code_verifier: b.verifier })
      expect([expired.status, expired.json.error]).toEqual([400, "invalid_grant"])
      // an unknown refresh token is the same kind of failure
      expect((yield* refresh(emu, "no-such-token")).json.error).toBe("invalid_grant")
    })
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"
import { ACCOUNT_QUERY, authorize, connect, exchange, graphql, jwtPayload, listen, refresh, waitFor } from "../../support/emulatorClient.js"

// One test per row of SERVICE_SPEC.md "Token and connection validity", driven over HTTP; time moves by the emulator clock.

describe("state table: token and connection validity", () => {
  it.scopedLive("Authorization code issued -> expired after 10 minutes (clock): it can no longer be exchanged", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const early = yield* authorize(emu)
      yield* emu.admin.advanceClock({ seconds: 9 * 60 + 59 })
      expect((yield* exchange(emu, early.code, { code_verifier: early.verifier })).status).toBe(200)

      const late = yield* authorize(emu)
      yield* emu.admin.advanceClock({ seconds: 10 * 60 })
      const res = yield* exchange(emu, late.code, { code_verifier: late.verifier })
      expect(res.status).toBe(400)
      expect(res.json).toEqual({ error: "invalid_grant", error_description: "authorization code has expired" })
    })
  )

  it.scopedLive("Authorization code issued -> used: the first exchange issues access and refresh tokens, a second use fails", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { code, verifier } = yield* authorize(emu)
      const first = yield* exchange(emu, code, { code_verifier: verifier })
      expect(first.status).toBe(200)
      expect(first.json.token_type).toBe("Bearer")
      expect(first.json.expires_in).toBe(3600)
      expect(first.json.access_token.split(".")).toHaveLength(3)
      expect(jwtPayload(first.json.access_token).exp - jwtPayload(first.json.access_token).iat).toBe(3600)
      expect(typeof first.json.refresh_token).toBe("string")
      expect(first.headers.get("cache-control")).toBe("no-store")
      const second = yield* exchange(emu, code, { code_verifier: verifier })
      expect(second.status).toBe(400)
      expect(second.json.error).toBe("invalid_grant")
    })
  )

  it.scopedLive("Access token valid -> expired after 60 minutes (clock): the API answers 401", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      yield* emu.admin.advanceClock({ seconds: 59 * 60 })
      expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(200)
      yield* emu.admin.advanceClock({ seconds: 60 })
      const res = yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)
      expect(res.status).toBe(401)
      expect(res.json.errors[0].message).toBe("Invalid Token Error")
    })
  )

  it.scopedLive("Access token expired -> refresh with a valid refresh token and secret: new access token; rotation off keeps the refresh token", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ rotation: false })
      const tokens = yield* connect(emu)
      yield* emu.admin.advanceClock({ seconds: 3600 })
      const res = yield* refresh(emu, tokens.refresh_token)
      expect(res.status).toBe(200)
      expect(res.json.refresh_token).toBeUndefined()
      expect(res.json.expires_in).toBe(3600)
      expect((yield* graphql(emu, res.json.access_token, ACCOUNT_QUERY)).status).toBe(200)
      // without rotation the same refresh token keeps working
      expect((yield* refresh(emu, tokens.refresh_token)).status).toBe(200)
    })
  )

  it.scopedLive("Access token expired -> refresh with Refresh Token Rotation: a new refresh token replaces the old one at once", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ rotation: true })
      const tokens = yield* connect(emu)
      const res = yield* refresh(emu, tokens.refresh_token)
      expect(res.status).toBe(200)
      expect(typeof res.json.refresh_token).toBe("string")
      expect(res.json.refresh_token).not.toBe(tokens.refresh_token)
      const old = yield* refresh(emu, tokens.refresh_token)
      expect(old.status).toBe(400)
      expect(old.json.error).toBe("invalid_grant")
      expect((yield* refresh(emu, res.json.refresh_token)).status).toBe(200)
    })
  )

  it.scopedLive("Refresh token valid -> admin disconnects from the marketplace: all access and refresh tokens die at once, APP_DISCONNECT fires", () =>
    Effect.gen(function* () {
      const received: Array<string> = []
      const receiver = yield* listen((body) => {
        received.push(body)
      })
      const emu = yield* makeTestEmulator({ accounts: 2, webhookUrl: receiver })
      const [a, b] = emu.accounts
      const tokensA = yield* connect(emu, a!.accountId)
      const secondA = yield* refresh(emu, tokensA.refresh_token)
      const tokensB = yield* connect(emu, b!.accountId)
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId: a!.accountId })
      expect((yield* graphql(emu, tokensA.access_token, ACCOUNT_QUERY)).status).toBe(401)
      expect((yield* graphql(emu, secondA.json.access_token, ACCOUNT_QUERY)).status).toBe(401)
      expect((yield* refresh(emu, tokensA.refresh_token)).json.error).toBe("invalid_grant")
      // another account's connection is untouched
      expect((yield* graphql(emu, tokensB.access_token, ACCOUNT_QUERY)).status).toBe(200)
      yield* waitFor(() => received.length === 1)
      expect(JSON.parse(received[0]!).data.webHookEvent).toMatchObject({ topic: "APP_DISCONNECT", accountId: a!.accountId })
    })
  )

  it.scopedLive("Refresh token valid -> appDisconnect mutation: associated tokens invalid, the app shows as disconnected", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      const res = yield* graphql(emu, tokens.access_token, "mutation { appDisconnect { app { id name } userErrors { message path } } }")
      expect(res.status).toBe(200)
      expect(res.json.data.appDisconnect).toEqual({ app: { id: emu.app.appId, name: expect.any(String) }, userErrors: [] })
      expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(401)
      expect((yield* refresh(emu, tokens.refresh_token)).json.error).toBe("invalid_grant")
    })
  )

  for (const reason of ["churn", "downgrade", "deactivation"] as const) {
    it.scopedLive(`Refresh token valid -> automatic disconnect (${reason}): refresh token invalid; the access token lives until it expires`, () =>
      Effect.gen(function* () {
        const emu = yield* makeTestEmulator()
        const tokens = yield* connect(emu)
        yield* emu.admin.automaticDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId, reason })
        const res = yield* refresh(emu, tokens.refresh_token)
        expect(res.status).toBe(400)
        expect(res.json.error).toBe("invalid_grant")
        expect(res.json.error_description).toContain(reason)
        expect(yield* emu.admin.isRefreshTokenValid({ clientId: emu.app.clientId, refreshToken: tokens.refresh_token })).toBe(false)
        expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(200)
        yield* emu.admin.advanceClock({ seconds: 3600 })
        expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(401)
      })
    )
  }

  it.scopedLive("Refresh token valid -> client secret regenerated: refresh tokens of the old secret revoked, old secret refused at once, access tokens live until expiry", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      const { clientSecret } = yield* emu.admin.regenerateSecret({ clientId: emu.app.clientId })
      const old = yield* refresh(emu, tokens.refresh_token)
      expect(old.status).toBe(401)
      expect(old.json.error).toBe("invalid_client")
      const withNew = yield* refresh(emu, tokens.refresh_token, { client_secret: clientSecret })
      expect(withNew.status).toBe(400)
      expect(withNew.json.error).toBe("invalid_grant")
      expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(200)
      // a new flow under the new secret works
      const again = yield* authorize(emu)
      expect((yield* exchange(emu, again.code, { code_verifier: again.verifier, client_secret: clientSecret })).status).toBe(200)
    })
  )

  it.scopedLive("Refresh token valid -> connection re-authorized after a scope change: refresh token invalid", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      yield* emu.admin.reauthorizeAfterScopeChange({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId, scopes: ["read_jobs", "read_clients", "write_jobs"] })
      const res = yield* refresh(emu, tokens.refresh_token)
      expect(res.status).toBe(400)
      expect(res.json.error).toBe("invalid_grant")
    })
  )

  it.scopedLive("Refresh token invalid -> full authorization flow from step 1: the user approves, new tokens are issued", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId })
      expect((yield* refresh(emu, tokens.refresh_token)).status).toBe(400)
      const fresh = yield* connect(emu)
      expect((yield* graphql(emu, fresh.access_token, ACCOUNT_QUERY)).status).toBe(200)
      expect((yield* refresh(emu, fresh.refresh_token)).status).toBe(200)
    })
  )

  it.scopedLive("Any refresh token for an app and admin -> a sandbox test session starts: refresh tokens invalid, access tokens stay valid", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const tokens = yield* connect(emu)
      const { accessToken } = yield* emu.admin.startSandboxSession({ clientId: emu.app.clientId, accountId: emu.accounts[0]!.accountId })
      expect((yield* refresh(emu, tokens.refresh_token)).json.error).toBe("invalid_grant")
      expect((yield* graphql(emu, tokens.access_token, ACCOUNT_QUERY)).status).toBe(200)
      expect((yield* graphql(emu, accessToken, ACCOUNT_QUERY)).status).toBe(200)
      expect(jwtPayload(accessToken).exp - jwtPayload(accessToken).iat).toBe(3600)
    })
  )
})

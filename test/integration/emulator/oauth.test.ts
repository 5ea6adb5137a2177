import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator } from "../../support/emulator.js"
import { approveInBrowser } from "../../support/browser.js"
import { authorize, authorizeUrl, exchange, http, pkce, postForm } from "../../support/emulatorClient.js"

describe("authorization endpoint", () => {
  it.scopedLive("manual mode shows a login + consent page listing the app's scopes; Allow Access redirects with code and the state unchanged", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ autoApprove: false, accounts: 2, scopes: ["read_jobs", "read_clients"] })
      const pair = pkce()
      const url = authorizeUrl(emu, { state: "st/ate+=1", code_challenge: pair.challenge, code_challenge_method: "S256" })
      const page = yield* http(url)
      expect(page.status).toBe(200)
      expect(page.text).toContain("Allow Access")
      expect(page.text).toContain("Deny")
      expect(page.text).toContain('data-scope="read_jobs"')
      expect(page.text).toContain('data-scope="read_clients"')
      expect(page.text).not.toContain('data-scope="read_invoices"')
      const second = emu.accounts[1]!
      const res = yield* approveInBrowser(url, { accountId: second.accountId })
      expect(res.status).toBe(302)
      expect(res.location!.startsWith(`${emu.app.redirectUri}?`)).toBe(true)
      const location = new URL(res.location!)
      expect(location.searchParams.get("state")).toBe("st/ate+=1")
      const tokens = yield* exchange(emu, location.searchParams.get("code")!, { code_verifier: pair.verifier })
      expect(tokens.status).toBe(200)
      const account = yield* http(`${emu.baseUrl}/api/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokens.json.access_token}` },
        body: JSON.stringify({ query: "{ account { id } }" })
      })
      expect(account.json.data.account.id).toBe(second.accountId)
    })
  )

  it.scopedLive("auto-approve answers 302 at once; state is omitted when none was sent; login_hint picks the account", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ accounts: 2 })
      const res = yield* http(authorizeUrl(emu, { login_hint: emu.accounts[1]!.accountId }))
      expect(res.status).toBe(302)
      const location = new URL(res.headers.get("location")!)
      expect(location.searchParams.has("state")).toBe(false)
      expect(location.searchParams.get("code")).toBeTruthy()
      const unknown = yield* http(authorizeUrl(emu, { login_hint: "nobody@example.com" }))
      expect(unknown.status).toBe(400)
      expect(unknown.headers.get("location")).toBeNull()
    })
  )

  it.scopedLive("a redirect_uri that is not the app's exact callback URL gets an error page and no redirect", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      for (const redirect of [`${emu.app.redirectUri}/`, "http://evil.example/cb", undefined]) {
        const res = yield* http(authorizeUrl(emu, { redirect_uri: redirect }))
        expect(res.status).toBe(400)
        expect(res.headers.get("location")).toBeNull()
        expect(res.text).toContain("redirect_uri")
      }
      const unknownClient = yield* http(authorizeUrl(emu, { client_id: "nope" }))
      expect(unknownClient.status).toBe(400)
      expect(unknownClient.headers.get("location")).toBeNull()
    })
  )

  it.scopedLive("response_type other than code, a challenge method other than S256, or a method without a challenge are refused", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { challenge } = pkce()
      const cases: Array<[Record<string, string>, string]> = [
        [{ response_type: "token" }, "unsupported_response_type"],
        [{ code_challenge: challenge, code_challenge_method: "plain" }, "invalid_request"],
        [{ code_challenge: challenge }, "invalid_request"],
        [{ code_challenge_method: "S256" }, "invalid_request"]
      ]
      for (const [params, error] of cases) {
        const res = yield* http(authorizeUrl(emu, { state: "s", ...params }))
        expect(res.status).toBe(302)
        const location = new URL(res.headers.get("location")!)
        expect(location.searchParams.get("error")).toBe(error)
        expect(location.searchParams.get("state")).toBe("s")
        expect(location.searchParams.has("code")).toBe(false)
      }
    })
  )

  it.scopedLive("Deny on a flow from the marketplace (no state, no PKCE) returns to the app's marketplace listing", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ autoApprove: false })
      const res = yield* approveInBrowser(authorizeUrl(emu), { deny: true })
      expect(res.status).toBe(302)
      expect(res.location).toBe(`${emu.baseUrl}/marketplace/apps/${encodeURIComponent(emu.app.appId)}`)
      const listing = yield* http(res.location!)
      expect(listing.status).toBe(200)
    })
  )

  it.scopedLive("Deny on a flow that began outside the service: no redirect, the user stays on a page", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ autoApprove: false })
      const { challenge } = pkce()
      const res = yield* approveInBrowser(authorizeUrl(emu, { state: "abc", code_challenge: challenge, code_challenge_method: "S256" }), { deny: true })
      expect(res.status).toBe(200)
      expect(res.location).toBeNull()
      expect(res.body).toContain("denied")
    })
  )

  it.scopedLive("setApproval switches between manual and auto for a chosen account", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ autoApprove: false, accounts: 2 })
      expect((yield* http(authorizeUrl(emu))).status).toBe(200)
      yield* emu.admin.setApproval({ mode: "auto", accountId: emu.accounts[1]!.accountId })
      const { code } = yield* authorize(emu, { pkce: false })
      const tokens = yield* exchange(emu, code)
      const payload = JSON.parse(Buffer.from(tokens.json.access_token.split(".")[1], "base64url").toString())
      expect(payload.account_id).toBe(emu.accounts[1]!.accountId)
    })
  )
})

describe("token endpoint errors (RFC 6749 JSON)", () => {
  it.scopedLive("missing fields -> 400 invalid_request; unknown grant -> 400 unsupported_grant_type; unknown client or wrong secret -> 401 invalid_client", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const token = `${emu.baseUrl}/api/oauth/token`
      const base = { client_id: emu.app.clientId, client_secret: emu.app.clientSecret }
      const check = (fields: Record<string, string | undefined>, status: number, error: string) =>
        Effect.gen(function* () {
          const res = yield* postForm(token, fields)
          expect([res.status, res.json.error]).toEqual([status, error])
          expect(typeof res.json.error_description).toBe("string")
        })
      yield* check({ ...base }, 400, "invalid_request")
      yield* check({ ...base, grant_type: "authorization_code" }, 400, "invalid_request")
      yield* check({ ...base, grant_type: "authorization_code", code: "c" }, 400, "invalid_request")
      yield* check({ ...base, grant_type: "refresh_token" }, 400, "invalid_request")
      yield* check({ grant_type: "refresh_token", refresh_token: "r", client_id: emu.app.clientId }, 400, "invalid_request")
      yield* check({ ...base, grant_type: "password" }, 400, "unsupported_grant_type")
      yield* check({ ...base, client_id: "nope", grant_type: "refresh_token", refresh_token: "r" }, 401, "invalid_client")
      yield* check({ ...base, client_secret: "wrong", grant_type: "refresh_token", refresh_token: "r" }, 401, "invalid_client")
      const json = yield* http(token, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...base, grant_type: "refresh_token" }) })
      expect([json.status, json.json.error]).toEqual([400, "invalid_request"])
    })
  )

  it.scopedLive("a code is bound to its redirect_uri and client; a verifier sent for a flow without PKCE is refused", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const a = yield* authorize(emu)
      const wrongRedirect = yield* exchange(emu, a.code, { code_verifier: a.verifier, redirect_uri: "http://127.0.0.1:1/other" })
      expect([wrongRedirect.status, wrongRedirect.json.error]).toEqual([400, "invalid_grant"])
      const other = yield* emu.admin.createApp({ clientId: "other-client", clientSecret: "other-secret", redirectUri: emu.app.redirectUri })
      const otherClient = yield* exchange(emu, a.code, { code_verifier: a.verifier, client_id: other.clientId, client_secret: "other-secret" })
      expect([otherClient.status, otherClient.json.error]).toEqual([400, "invalid_grant"])
      const b = yield* authorize(emu, { pkce: false })
      const stray = yield* exchange(emu, b.code, { code_verifier: pkce().verifier })
      expect([stray.status, stray.json.error]).toEqual([400, "invalid_grant"])
      expect((yield* exchange(emu, b.code)).status).toBe(200)
    })
  )
})

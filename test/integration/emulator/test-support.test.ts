import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { approveInBrowser } from "../../support/browser.js"
import { EmulatorTest, EmulatorTestWith, TestEmulator } from "../../support/emulator.js"
import { authorizeUrl, exchange, graphql, pkce } from "../../support/emulatorClient.js"

// The shared fixtures other suites use: they work inside layer(...) where Effect's TestClock is installed.

layer(EmulatorTest({ accounts: 2, jobs: 4, autoApprove: false }))("EmulatorTest layer", (it) => {
  it.effect("provides the app, the accounts and an admin; the emulator keeps real time under TestClock", () =>
    Effect.gen(function* () {
      const emu = yield* TestEmulator
      expect(emu.accounts).toHaveLength(2)
      expect(emu.app.clientSecret.length).toBeGreaterThan(20)
      yield* TestClock.adjust("2 hours")
      const { nowMs } = yield* emu.admin.clock()
      expect(Math.abs(nowMs - Date.now())).toBeLessThan(5_000)
      const pair = pkce()
      const res = yield* approveInBrowser(authorizeUrl(emu, { state: "s", code_challenge: pair.challenge, code_challenge_method: "S256" }), {
        accountId: emu.accounts[1]!.accountId
      })
      expect(res.status).toBe(302)
      const tokens = yield* exchange(emu, new URL(res.location!).searchParams.get("code")!, { code_verifier: pair.verifier })
      const jobs = yield* graphql(emu, tokens.json.access_token, "{ jobs(first: 10) { nodes { id } } }")
      expect(jobs.json.data.jobs.nodes).toHaveLength(4)
    })
  )
})

layer(EmulatorTestWith(Effect.succeed({ redirectUri: "http://127.0.0.1:45678/oauth/callback" })))("EmulatorTestWith", (it) => {
  it.effect("takes options computed by an effect (e.g. the callback listener's port)", () =>
    Effect.gen(function* () {
      const emu = yield* TestEmulator
      expect(emu.app.redirectUri).toBe("http://127.0.0.1:45678/oauth/callback")
      const res = yield* approveInBrowser(authorizeUrl(emu))
      expect(res.location!.startsWith("http://127.0.0.1:45678/oauth/callback?code=")).toBe(true)
    })
  )
})

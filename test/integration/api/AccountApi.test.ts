import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { AccountApi } from "../../../src/auth/AccountApi.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

/** AccountApi over GraphqlTransport: the transport's classification, as the auth module's callers see it. */
layer(syncHarness({ accounts: 2 }), { timeout: 60_000, excludeTestServices: true })("AccountApi against the emulator", (it) => {
  const tokenOf = (index: number) =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const account = emulator.accounts[index]!
      const tokens = yield* AccessTokens
      if ((yield* Effect.either(tokens.get(account.accountId)))._tag === "Left") yield* connectAccount(account.accountId)
      return { ...emulator, account, token: yield* tokens.get(account.accountId), api: yield* AccountApi }
    })

  it.effect("identity names the token's account; a refused token is TokenRejected, sent once", () =>
    Effect.gen(function* () {
      const { account, token, api, admin } = yield* tokenOf(0)
      expect(yield* api.identity(token)).toEqual({ id: account.accountId, name: account.name })

      yield* admin.resetStats()
      const rejected = yield* Effect.flip(api.identity(Redacted.make("not-a-token")))
      expect(rejected).toMatchObject({ _tag: "TokenRejected", operation: "Account" })
      expect((yield* admin.stats()).graphqlRequests).toBe(1)
    })
  )

  it.effect("5xx answers are retried (bounded), then ServiceCallFailed naming the operation and the cause", () =>
    Effect.gen(function* () {
      const { token, api, admin } = yield* tokenOf(0)
      yield* admin.resetStats()
      yield* admin.setFaults({ errorRate: 1, seed: 1 })
      const failed = yield* Effect.flip(api.identity(token)).pipe(Effect.ensuring(Effect.orDie(admin.setFaults({}))))
      expect(failed._tag).toBe("ServiceCallFailed")
      expect(failed.message).toMatch(/^Account failed: HTTP 5\d\d, after retries$/)
      // the transport's transient schedule: 1 attempt + 8 retries
      expect((yield* admin.stats()).faultsInjected.error).toBe(9)
    })
  )

  it.effect("appDisconnect: userErrors are DisconnectRejected; accepted, it answers the app's name", () =>
    Effect.gen(function* () {
      const { account, token, api, admin, app } = yield* tokenOf(1)
      // the refresh token dies, the access token lives on: the service answers with userErrors
      yield* admin.automaticDisconnect({ clientId: app.clientId, accountId: account.accountId, reason: "churn" })
      const rejected = yield* Effect.flip(api.appDisconnect(account.accountId, token))
      expect(rejected._tag).toBe("DisconnectRejected")
      if (rejected._tag === "DisconnectRejected") {
        expect(rejected.accountId).toBe(account.accountId)
        expect(rejected.messages).toEqual([expect.stringContaining("not connected")])
      }

      const other = yield* tokenOf(0)
      const accepted = yield* api.appDisconnect(other.account.accountId, other.token)
      expect(accepted.appName).toEqual(expect.any(String))
      // the service no longer accepts that account's tokens
      expect((yield* Effect.flip(api.identity(other.token)))._tag).toBe("TokenRejected")
    })
  )
})

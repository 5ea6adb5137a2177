import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { gql } from "graphql-tag"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { CostBudget } from "../../../src/api/CostBudget.js"
import { AccountQuery } from "../../../src/api/documents.js"
import { ApiVersionWatchLive } from "../../../src/api/ApiVersionWatch.js"
import { makeGraphqlTransport } from "../../../src/api/GraphqlTransport.js"
import { ServiceClient } from "../../../src/api/ServiceClient.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

const jobsStream = jobScalarsStream

const JobsPageQuery = jobsStream.document

const SearchJobs = gql`
  query SearchJobs($first: Int!) {
    jobs(first: $first, searchTerm: "gutter") {
      nodes {
        id
      }
    }
  }
`

layer(syncHarness({ accounts: 1, jobs: 300 }), { timeout: 60_000, excludeTestServices: true })("GraphqlTransport and ServiceClient against the emulator", (it) => {
  const setup = Effect.gen(function* () {
    const emulator = yield* TestEmulator
    const accountId = emulator.accounts[0]!.accountId
    const tokens = yield* AccessTokens
    if ((yield* Effect.either(tokens.get(accountId)))._tag === "Left") yield* connectAccount(accountId)
    const service = yield* ServiceClient
    const transport = yield* Effect.provide(makeGraphqlTransport, ApiVersionWatchLive)
    const client = {
      executeWithToken: transport.executeWithToken,
      execute: (account: string, ...rest: Parameters<typeof transport.executeWithToken> extends [unknown, ...infer R] ? R : never) =>
        service.execute(tokens.credentials(account), ...rest)
    }
    return { ...emulator, accountId, token: yield* tokens.get(accountId), client }
  })

  it.effect("answers data with its cost; classifies 401, query errors and throttling without retrying them", () =>
    Effect.gen(function* () {
      const { accountId, token, client, admin, app } = yield* setup
      const ok = yield* client.executeWithToken(token, JobsPageQuery, { first: 10, offset: 0 })
      expect((ok.data as { jobs: { nodes: Array<unknown> } }).jobs.nodes).toHaveLength(10)
      // 28 fields and pageInfo { hasNextPage } per row slot
      expect(ok.cost?.requestedQueryCost).toBe(1 + 10 * (28 + 2))
      expect(ok.cost?.throttleStatus.maximumAvailable).toBe(10_000)

      yield* admin.resetStats()
      const bad = yield* Effect.flip(client.executeWithToken(Redacted.make("not-a-token"), AccountQuery))
      expect(bad._tag).toBe("GraphqlTokenInvalid")

      const tooBig = yield* Effect.flip(client.executeWithToken(token, JobsPageQuery, { first: 101, offset: 0 }))
      expect(tooBig._tag).toBe("QueryFailed")
      const unsupported = yield* Effect.flip(client.executeWithToken(token, SearchJobs, { first: 5 }))
      expect(unsupported).toMatchObject({ _tag: "QueryFailed", code: "ARGUMENT_NOT_SUPPORTED", operation: "SearchJobs" })
      expect(unsupported.message).toContain("searchTerm")

      yield* admin.setLimits({ clientId: app.clientId, accountId, maxPoints: 100, restoreRate: 10 })
      const throttled = yield* Effect.flip(client.executeWithToken(token, JobsPageQuery, { first: 100, offset: 0 }))
      expect(throttled._tag).toBe("Throttled")
      if (throttled._tag === "Throttled") expect(throttled.cost?.requestedQueryCost).toBe(3001)
      yield* admin.setLimits({ clientId: app.clientId, accountId, maxPoints: 10_000, restoreRate: 100_000 })
      // none of these was retried: one request each
      expect((yield* admin.stats()).graphqlRequests).toBe(4)
    })
  )

  it.effect("a missing scope is a permission error", () =>
    Effect.gen(function* () {
      const { accountId, client, admin } = yield* setup
      const limited = yield* admin.createApp({ clientId: "limited-app", clientSecret: "s3cret-limited", redirectUri: "http://127.0.0.1:1/cb", scopes: [] })
      const { accessToken } = yield* admin.startSandboxSession({ clientId: limited.clientId, accountId })
      const denied = yield* Effect.flip(client.executeWithToken(Redacted.make(accessToken), JobsPageQuery, { first: 5, offset: 0 }))
      expect(denied._tag).toBe("PermissionDenied")
      // the account query works with any scope set
      const account = yield* client.executeWithToken(Redacted.make(accessToken), AccountQuery)
      expect((account.data as { account: { id: string } }).account.id).toBe(accountId)
    })
  )

  it.effect("a 429 is retried after Retry-After", () =>
    Effect.gen(function* () {
      const { accountId, token, client, admin, app } = yield* setup
      yield* admin.setLimits({ clientId: app.clientId, accountId, requestLimit: 2, requestWindowSeconds: 1 })
      yield* admin.resetStats()
      const started = Date.now()
      for (let i = 0; i < 3; i++) yield* client.executeWithToken(token, AccountQuery)
      expect((yield* admin.stats()).rateLimited).toBeGreaterThanOrEqual(1)
      expect(Date.now() - started).toBeGreaterThanOrEqual(900)
      yield* admin.setLimits({ clientId: app.clientId, accountId, requestLimit: 2500, requestWindowSeconds: 300 })
    })
  )

  it.effect("execute: a 401 refreshes the token once and retries once", () =>
    Effect.gen(function* () {
      const { accountId, client, admin } = yield* setup
      // the service's clock moves past the token's expiry; ours does not, so the stored token is sent and refused
      yield* admin.advanceClock({ seconds: 3700 })
      yield* admin.resetStats()
      const result = yield* client.execute(accountId, AccountQuery)
      expect((result.data as { account: { id: string } }).account.id).toBe(accountId)
      const stats = yield* admin.stats()
      expect(stats.tokenRequests.refresh_token).toBe(1)
      expect(stats.graphqlRequests).toBe(2)
    })
  )

  it.effect("execute: after a THROTTLED answer, waits the deficit at the restore rate and retries", () =>
    Effect.gen(function* () {
      const { accountId, token, client, admin, app } = yield* setup
      const budget = yield* CostBudget
      yield* admin.setLimits({ clientId: app.clientId, accountId, maxPoints: 4000, restoreRate: 2000 })
      yield* client.execute(accountId, AccountQuery) // the budget now mirrors a (nearly) full bucket
      // someone else (another process) drains the bucket behind the budget's back
      yield* client.executeWithToken(token, JobsPageQuery, { first: 100, offset: 0 })
      const before = yield* budget.stats(accountId)
      const started = Date.now()
      const page = yield* client.execute(accountId, JobsPageQuery, { first: 100, offset: 0 })
      expect((page.data as { jobs: { nodes: Array<unknown> } }).jobs.nodes).toHaveLength(100)
      const after = yield* budget.stats(accountId)
      expect(after.throttled - before.throttled).toBe(1)
      // the deficit (at most 3001 points) at 2000/s: over a few hundred ms and under 1.5 s, never a blind backoff
      const waited = after.waitedMs - before.waitedMs
      expect(waited).toBeGreaterThan(200)
      expect(waited).toBeLessThanOrEqual(1501)
      expect(Date.now() - started).toBeGreaterThanOrEqual(waited)
      yield* admin.setLimits({ clientId: app.clientId, accountId, maxPoints: 10_000, restoreRate: 500 })
    })
  )
})

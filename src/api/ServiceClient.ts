import type { DocumentNode } from "graphql"
import { Context, Effect, Layer, type Redacted, Schedule } from "effect"
import { AccessTokens } from "../auth/AccessTokens.js"
import type { AccessTokenError } from "../auth/errors.js"
import { CostBudget } from "./CostBudget.js"
import { GraphqlTokenInvalid, type ServiceError } from "./errors.js"
import { type GraphqlResult, GraphqlTransport, GraphqlTransportLive, type Variables } from "./GraphqlTransport.js"

export type { GraphqlResult, Variables } from "./GraphqlTransport.js"

export interface ServiceClientShape {
  /** One query with a given token: transient failures retried (bounded, jittered), 429 honoured, nothing else. */
  readonly executeWithToken: (
    token: Redacted.Redacted<string>,
    document: DocumentNode,
    variables?: Variables
  ) => Effect.Effect<GraphqlResult, ServiceError>
  /**
   * One query for an account: token from AccessTokens (a 401 refreshes once and retries once), within the
   * account's CostBudget (waits before a query that would be throttled; after a THROTTLED answer anyway,
   * waits the deficit at the restore rate and retries, bounded).
   */
  readonly execute: (
    accountId: string,
    document: DocumentNode,
    variables?: Variables
  ) => Effect.Effect<GraphqlResult, ServiceError | AccessTokenError>
}

export class ServiceClient extends Context.Tag("account-sync/ServiceClient")<ServiceClient, ServiceClientShape>() {}

/** THROTTLED answers: the wait itself is the budget's (deficit / restore rate); this only bounds the attempts. */
export const throttledRetry = Schedule.recurs(5)

export const makeServiceClient = Effect.gen(function* () {
  const transport = yield* GraphqlTransport
  const tokens = yield* AccessTokens
  const budget = yield* CostBudget
  const executeWithToken: ServiceClientShape["executeWithToken"] = transport.executeWithToken

  const budgeted = (accountId: string, token: Redacted.Redacted<string>, document: DocumentNode, variables: Variables) =>
    Effect.gen(function* () {
      yield* budget.acquire(accountId, yield* budget.estimate(accountId, document, variables))
      const result = yield* executeWithToken(token, document, variables).pipe(
        Effect.tapErrorTag("Throttled", (e) =>
          budget.throttled(accountId, document, variables, e.cost).pipe(
            // without a throttle status there is nothing to compute the wait from: back off a second
            Effect.zipRight(e.cost ? Effect.void : Effect.sleep("1 second"))
          )
        )
      )
      if (result.cost) yield* budget.observe(accountId, document, variables, result.cost)
      return result
    }).pipe(Effect.retry({ schedule: throttledRetry, while: (e) => e._tag === "Throttled" }))

  const execute: ServiceClientShape["execute"] = (accountId, document, variables = {}) =>
    Effect.gen(function* () {
      const token = yield* tokens.get(accountId)
      return yield* budgeted(accountId, token, document, variables).pipe(
        Effect.catchTag("GraphqlTokenInvalid", () =>
          tokens.refreshAfterRejection(accountId, token).pipe(
            Effect.flatMap((fresh) => budgeted(accountId, fresh, document, variables)),
            Effect.mapError((e) => (e._tag === "GraphqlTokenInvalid" ? new GraphqlTokenInvalid({ ...e, accountId }) : e))
          )
        )
      )
    }).pipe(Effect.annotateLogs({ accountId }))

  return ServiceClient.of({ executeWithToken, execute })
})

/**
 * Over the shared GraphqlTransportLive (layers are memoized by reference, so the auth services' AccountApi and this
 * client use one transport in one build): needs ServiceSettings, an HttpClient, AccessTokens and CostBudget.
 */
export const ServiceClientLive = Layer.effect(ServiceClient, makeServiceClient).pipe(Layer.provide(GraphqlTransportLive))

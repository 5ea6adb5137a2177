import type { DocumentNode } from "graphql"
import { Context, Effect, Layer, type Redacted, Schedule } from "effect"
import { CostBudget } from "./CostBudget.js"
import { idle } from "./idleWait.js"
import { GraphqlTokenInvalid, type ServiceError } from "./errors.js"
import { type GraphqlResult, GraphqlTransport, GraphqlTransportLive, type Variables } from "./GraphqlTransport.js"

export type { GraphqlResult, Variables } from "./GraphqlTransport.js"

/**
 * Where an account's access token comes from, and what happens after the service rejected one. The API layer knows
 * nothing of how tokens are stored or refreshed: whoever calls (the sync engine, through the auth module's
 * AccessTokens) hands this in, with its own error type `E`.
 */
export interface AccountCredentials<E> {
  readonly accountId: string
  readonly token: Effect.Effect<Redacted.Redacted<string>, E>
  /** After a 401 for `rejected`: a replacement token (refreshed, or one refreshed meanwhile by someone else). */
  readonly refreshAfterRejection: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, E>
}

export interface ServiceClientShape {
  /**
   * One query for an account: its token from `credentials` (a 401 refreshes once and retries once), within the
   * account's CostBudget (waits before a query that would be throttled; after a THROTTLED answer anyway, waits the
   * deficit at the restore rate and retries, bounded). Transient failures and 429s are retried by the transport.
   */
  readonly execute: <E>(
    credentials: AccountCredentials<E>,
    document: DocumentNode,
    variables?: Variables
  ) => Effect.Effect<GraphqlResult, ServiceError | E>
}

export class ServiceClient extends Context.Tag("account-sync/ServiceClient")<ServiceClient, ServiceClientShape>() {}

/** THROTTLED answers: the wait itself is the budget's (deficit / restore rate); this only bounds the attempts. */
export const throttledRetry = Schedule.recurs(5)

export const makeServiceClient = Effect.gen(function* () {
  const transport = yield* GraphqlTransport
  const budget = yield* CostBudget

  const budgeted = (accountId: string, token: Redacted.Redacted<string>, document: DocumentNode, variables: Variables) =>
    Effect.gen(function* () {
      yield* budget.acquire(accountId, yield* budget.estimate(accountId, document, variables))
      const result = yield* transport.executeWithToken(token, document, variables).pipe(
        Effect.tapErrorTag("Throttled", (e) =>
          budget.throttled(accountId, document, variables, e.cost).pipe(
            // without a throttle status there is nothing to compute the wait from: back off a second
            Effect.zipRight(e.cost ? Effect.void : idle(Effect.sleep("1 second")))
          )
        )
      )
      if (result.cost) yield* budget.observe(accountId, document, variables, result.cost)
      return result
    }).pipe(Effect.retry({ schedule: throttledRetry, while: (e) => e._tag === "Throttled" }))

  const execute: ServiceClientShape["execute"] = (credentials, document, variables = {}) =>
    Effect.gen(function* () {
      const { accountId } = credentials
      const token = yield* credentials.token
      return yield* budgeted(accountId, token, document, variables).pipe(
        Effect.catchTag("GraphqlTokenInvalid", () =>
          credentials.refreshAfterRejection(token).pipe(
            Effect.flatMap((fresh) => budgeted(accountId, fresh, document, variables)),
            Effect.mapError((e) => (e instanceof GraphqlTokenInvalid ? new GraphqlTokenInvalid({ ...e, accountId }) : e))
          )
        )
      )
    }).pipe(Effect.annotateLogs({ accountId: credentials.accountId }))

  return ServiceClient.of({ execute })
})

/**
 * Over the shared GraphqlTransportLive (layers are memoized by reference, so the auth services' AccountApi and this
 * client use one transport in one build): needs the ServiceEndpoint, an HttpClient and a CostBudget.
 */
export const ServiceClientLive = Layer.effect(ServiceClient, makeServiceClient).pipe(Layer.provide(GraphqlTransportLive))

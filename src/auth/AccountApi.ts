import { Context, Data, Effect, Layer, ParseResult, type Redacted, Schema } from "effect"
import type { DocumentNode } from "graphql"
import { AccountData, AccountQuery, AppDisconnectMutation, operationName } from "../api/documents.js"
import type { ServiceError } from "../api/errors.js"
import { failOnUserErrors, GraphqlTransport } from "../api/GraphqlTransport.js"
import { DisconnectRejected, ServiceCallFailed } from "./errors.js"

// The two GraphQL calls the auth module makes with a given token: who the token belongs to, and appDisconnect.

/** HTTP 401: the token is invalid or expired. */
export class TokenRejected extends Data.TaggedError("TokenRejected")<{ readonly operation: string }> {}

const DisconnectData = Schema.Struct({
  appDisconnect: Schema.Struct({
    app: Schema.optional(Schema.NullOr(Schema.Struct({ name: Schema.String }))),
    userErrors: Schema.Array(Schema.Struct({ message: Schema.String }))
  })
})

/** The transport's classification, as the auth module's callers know it: a 401 is TokenRejected, the rest ServiceCallFailed. */
const toAuthError =
  (accountId: string | undefined) =>
  (e: ServiceError): ServiceCallFailed | TokenRejected => {
    const failed = (reason: string, status?: number) =>
      new ServiceCallFailed({ operation: e.operation, reason, ...(accountId ? { accountId } : {}), ...(status ? { status } : {}) })
    switch (e._tag) {
      case "GraphqlTokenInvalid":
        return new TokenRejected({ operation: e.operation })
      case "TransientFailure":
        return failed(`${e.reason}, after retries`)
      case "RateLimited":
        return failed("request rate limited, after retries", 429)
      case "Throttled":
        return failed("throttled: the account's cost bucket is empty")
      case "PermissionDenied":
        return failed(`permission denied: ${e.detail}`)
      case "QueryFailed":
        return failed(e.code ? `${e.code}: ${e.detail}` : e.detail)
      case "UnexpectedResponse":
        return failed(`unexpected answer: ${e.detail}`)
      case "ApiVersionReplaced":
        return failed(e.message)
      case "ResponseTooLarge":
        return failed(`answer larger than GRAPHQL_MAX_RESPONSE_BYTES (${e.limit} bytes)`)
    }
  }

export class AccountApi extends Context.Tag("account-sync/AccountApi")<
  AccountApi,
  {
    /** `account { id name }` with a fresh token: ties the tokens to an account. */
    readonly identity: (
      token: Redacted.Redacted<string>
    ) => Effect.Effect<{ readonly id: string; readonly name: string }, ServiceCallFailed | TokenRejected>
    /** `appDisconnect`: the service invalidates the account's tokens. `userErrors` fail with DisconnectRejected. */
    readonly appDisconnect: (
      accountId: string,
      token: Redacted.Redacted<string>
    ) => Effect.Effect<{ readonly appName: string | null }, ServiceCallFailed | TokenRejected | DisconnectRejected>
  }
>() {}

/** Needs GraphqlTransport. */
export const AccountApiLive = Layer.effect(
  AccountApi,
  Effect.gen(function* () {
    const transport = yield* GraphqlTransport

    const call = <A, I>(document: DocumentNode, data: Schema.Schema<A, I>, token: Redacted.Redacted<string>, accountId?: string) =>
      transport.executeWithToken(token, document).pipe(
        Effect.mapError(toAuthError(accountId)),
        Effect.flatMap((result) =>
          Schema.decodeUnknown(data)(result.data).pipe(
            Effect.mapError(
              (e) =>
                new ServiceCallFailed({
                  operation: operationName(document),
                  reason: `unexpected data: ${ParseResult.TreeFormatter.formatErrorSync(e)}`,
                  ...(accountId ? { accountId } : {})
                })
            )
          )
        )
      )

    return {
      identity: (token) =>
        call(AccountQuery, AccountData, token).pipe(
          Effect.flatMap(({ account }) =>
            account === null
              ? Effect.fail(
                  new ServiceCallFailed({ operation: operationName(AccountQuery), reason: "the service returned no account for the token" })
                )
              : Effect.succeed(account)
          )
        ),
      appDisconnect: (accountId, token) =>
        call(AppDisconnectMutation, DisconnectData, token, accountId).pipe(
          Effect.tap(({ appDisconnect }) =>
            failOnUserErrors(operationName(AppDisconnectMutation), appDisconnect).pipe(
              Effect.mapError((e) => new DisconnectRejected({ accountId, messages: e.messages }))
            )
          ),
          Effect.map(({ appDisconnect }) => ({ appName: appDisconnect.app?.name ?? null }))
        )
    }
  })
)

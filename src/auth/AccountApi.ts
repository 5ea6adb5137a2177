import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Data, Duration, Effect, Either, Layer, Redacted, Schedule, Schema } from "effect"
import { DisconnectRejected, ServiceCallFailed } from "./errors.js"
import { ServiceSettings } from "./ServiceSettings.js"

/**
 * The two GraphQL calls the auth module makes with a given token: who the token belongs to, and appDisconnect.
 * Interim: once src/api's ServiceClient.executeWithToken settles, these can be built on it.
 */

/** HTTP 401: the token is invalid or expired. */
export class TokenRejected extends Data.TaggedError("TokenRejected")<{ readonly operation: string }> {}

class Transient extends Data.TaggedError("Transient")<{ readonly reason: string }> {}

const graphqlRetry = Schedule.exponential("200 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(4)))

const Envelope = <A, I>(data: Schema.Schema<A, I>) =>
  Schema.parseJson(
    Schema.Struct({
      data: Schema.optional(Schema.NullOr(data)),
      errors: Schema.optional(Schema.Array(Schema.Struct({ message: Schema.String })))
    })
  )

const IdentityData = Schema.Struct({ account: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })) })
const DisconnectData = Schema.Struct({
  appDisconnect: Schema.Struct({
    app: Schema.optional(Schema.NullOr(Schema.Struct({ name: Schema.String }))),
    userErrors: Schema.Array(Schema.Struct({ message: Schema.String }))
  })
})

const identityQuery = "query AccountIdentity { account { id name } }"
const disconnectMutation = "mutation AppDisconnect { appDisconnect { app { name } userErrors { message } } }"

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

export const AccountApiLive = Layer.effect(
  AccountApi,
  Effect.gen(function* () {
    const settings = yield* ServiceSettings
    const client = yield* HttpClient.HttpClient
    const url = `${settings.baseUrl}/api/graphql`

    const call = <A, I>(operation: string, query: string, data: Schema.Schema<A, I>, token: Redacted.Redacted<string>, accountId?: string) => {
      const failed = (reason: string, status?: number) =>
        new ServiceCallFailed({ operation, reason, ...(accountId ? { accountId } : {}), ...(status ? { status } : {}) })
      const decode = Schema.decodeUnknownEither(Envelope(data))
      const request = HttpClientRequest.post(url).pipe(
        HttpClientRequest.bearerToken(Redacted.value(token)),
        HttpClientRequest.setHeaders({ "X-SERVICE-GRAPHQL-VERSION": settings.graphqlVersion, Accept: "application/json" }),
        HttpClientRequest.bodyUnsafeJson({ query, operationName: operation })
      )
      return Effect.gen(function* () {
        const response = yield* client.execute(request).pipe(Effect.mapError((e) => new Transient({ reason: e._tag })))
        if (response.status === 401) return yield* new TokenRejected({ operation })
        if (response.status >= 500 || response.status === 429) return yield* new Transient({ reason: `HTTP ${response.status}` })
        const body = yield* response.text.pipe(Effect.mapError(() => new Transient({ reason: "the answer was cut short" })))
        const decoded = decode(body)
        if (Either.isLeft(decoded)) {
          return response.status === 200
            ? yield* new Transient({ reason: "HTTP 200 with an undecodable body" })
            : yield* failed(`unexpected answer`, response.status)
        }
        const { data: value, errors } = decoded.right
        if (errors && errors.length > 0) return yield* failed(errors.map((e) => e.message).join("; "), response.status)
        if (value === undefined || value === null) return yield* failed("no data in the answer", response.status)
        return value
      }).pipe(
        Effect.timeoutFail({
          duration: settings.requestTimeout,
          onTimeout: () => new Transient({ reason: `no answer within ${Duration.format(settings.requestTimeout)}` })
        }),
        Effect.retry({ schedule: graphqlRetry, while: (e) => e._tag === "Transient" }),
        Effect.catchTag("Transient", (e) => Effect.fail(failed(`${e.reason}, after retries`)))
      )
    }

    return {
      identity: (token) =>
        call("AccountIdentity", identityQuery, IdentityData, token).pipe(
          Effect.flatMap(({ account }) =>
            account === null
              ? Effect.fail(new ServiceCallFailed({ operation: "AccountIdentity", reason: "the service returned no account for the token" }))
              : Effect.succeed(account)
          )
        ),
      appDisconnect: (accountId, token) =>
        call("AppDisconnect", disconnectMutation, DisconnectData, token, accountId).pipe(
          Effect.flatMap(({ appDisconnect }) =>
            appDisconnect.userErrors.length > 0
              ? Effect.fail(new DisconnectRejected({ accountId, messages: appDisconnect.userErrors.map((e) => e.message) }))
              : Effect.succeed({ appName: appDisconnect.app?.name ?? null })
          )
        )
    }
  })
)

import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option, Redacted, Schedule, Schema } from "effect"
import { ClientMisconfigured, TokenEndpointUnavailable } from "./errors.js"
import { jwtExpiry, jwtIssuedAt, jwtScopes } from "./Jwt.js"
import { OAuthClient } from "./OAuthClient.js"
import { printable } from "../observability/printable.js"
import { timeoutWithPauseGrace } from "./timeoutWithPauseGrace.js"

/** Tokens as issued by a code exchange or a refresh. */
export interface IssuedTokens {
  readonly accessToken: Redacted.Redacted<string>
  /** Absent on a refresh without rotation: keep the stored one. */
  readonly refreshToken: Option.Option<Redacted.Redacted<string>>
  /** The JWT's `exp`, or now + `expires_in` when the token has none. */
  readonly expiresAt: Date
  /** When the service issued it, on its clock (the JWT's `iat`, or `exp` less `expires_in`), when the token says. */
  readonly issuedAt?: Date
  /** Granted scopes when the service says (`scope`, space separated). */
  readonly scopes: Option.Option<ReadonlyArray<string>>
}

/** `invalid_grant`: the code or refresh token is not (or no longer) good. */
export class InvalidGrant extends Data.TaggedError("InvalidGrant")<{ readonly reason: string }> {}

/** A failure that did not change anything at the service: worth another attempt. */
class Transient extends Data.TaggedError("Transient")<{ readonly reason: string }> {}

const TokenResponse = Schema.Struct({
  access_token: Schema.NonEmptyString,
  refresh_token: Schema.optional(Schema.NullOr(Schema.NonEmptyString)),
  token_type: Schema.optional(Schema.String),
  expires_in: Schema.optional(Schema.Number),
  scope: Schema.optional(Schema.String)
})
const decodeTokenResponse = Schema.decodeUnknownEither(Schema.parseJson(TokenResponse))

/** RFC 6749 section 5.2 error body. */
const ErrorResponse = Schema.Struct({ error: Schema.String, error_description: Schema.optional(Schema.String) })
const decodeErrorResponse = Schema.decodeUnknownEither(Schema.parseJson(ErrorResponse))

/** A refresh (ours, for a connected account): bounded, jittered: about 0.2s, 0.4s, 0.8s, 1.6s between five attempts. */
export const tokenEndpointRetry = Schedule.exponential("200 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(4)))

/**
 * A code exchange (anyone can send a callback with a code): one attempt and at most one retry, jittered, so a
 * callback costs at most two calls to the service however it fails.
 */
export const codeExchangeRetry = Schedule.exponential("200 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(1)))

export class TokenEndpoint extends Context.Tag("account-sync/TokenEndpoint")<
  TokenEndpoint,
  {
    readonly exchangeCode: (input: {
      readonly code: string
      readonly codeVerifier: Option.Option<Redacted.Redacted<string>>
    }) => Effect.Effect<IssuedTokens, InvalidGrant | ClientMisconfigured | TokenEndpointUnavailable>
    readonly refresh: (input: {
      readonly accountId: string
      readonly refreshToken: Redacted.Redacted<string>
    }) => Effect.Effect<IssuedTokens, InvalidGrant | ClientMisconfigured | TokenEndpointUnavailable>
  }
>() {}

const describeError = (body: string): string =>
  Either.match(decodeErrorResponse(body), {
    onLeft: () => "no RFC 6749 error body",
    // the service's words: printed on terminals and in logs, so their control characters are escaped
    onRight: (e) => printable(e.error_description ? `${e.error}: ${e.error_description}` : e.error)
  })

export const TokenEndpointLive = Layer.effect(
  TokenEndpoint,
  Effect.gen(function* () {
    const settings = yield* OAuthClient
    const client = yield* HttpClient.HttpClient
    const url = `${settings.baseUrl}/api/oauth/token`

    const interpret = (response: HttpClientResponse.HttpClientResponse) =>
      Effect.gen(function* () {
        const body = yield* response.text.pipe(Effect.mapError(() => new Transient({ reason: "the answer was cut short" })))
        if (response.status === 200) {
          // never put the decode error in a message: it would quote the tokens
          const decoded = decodeTokenResponse(body)
          if (Either.isLeft(decoded)) return yield* new Transient({ reason: "HTTP 200 with an undecodable token response" })
          const t = decoded.right
          const now = yield* Clock.currentTimeMillis
          const accessToken = Redacted.make(t.access_token)
          const expiresAt = Option.getOrElse(jwtExpiry(accessToken), () => new Date(now + (t.expires_in ?? 3600) * 1000))
          const issuedAt = Option.getOrUndefined(jwtIssuedAt(accessToken, t.expires_in))
          return {
            accessToken,
            refreshToken: Option.map(Option.fromNullable(t.refresh_token), Redacted.make),
            expiresAt,
            ...(issuedAt === undefined ? {} : { issuedAt }),
            scopes: Option.match(Option.fromNullable(t.scope), {
              onNone: () => jwtScopes(accessToken),
              onSome: (s) => Option.some(s.split(/[\s,]+/).filter((x) => x.length > 0))
            })
          } satisfies IssuedTokens
        }
        if (response.status >= 500 || response.status === 429) {
          return yield* new Transient({ reason: `HTTP ${response.status}` })
        }
        const error = Either.getOrUndefined(decodeErrorResponse(body))
        if (error?.error === "invalid_grant") return yield* new InvalidGrant({ reason: describeError(body) })
        if (error?.error === "invalid_client" || response.status === 401) {
          return yield* new ClientMisconfigured({ reason: `HTTP ${response.status} ${describeError(body)}` })
        }
        return yield* new TokenEndpointUnavailable({ reason: `unexpected answer HTTP ${response.status} (${describeError(body)})` })
      })

    const post = (form: Record<string, string>, accountId: string | undefined, retry: Schedule.Schedule<unknown, unknown>) =>
      client.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUrlParams(form), HttpClientRequest.acceptJson)).pipe(
        Effect.mapError((e) => new Transient({ reason: `${e._tag}${e._tag === "RequestError" ? ` (${e.reason})` : ""}` })),
        Effect.flatMap(interpret),
        (attempt) => timeoutWithPauseGrace(attempt, settings.requestTimeout, () => new Transient({ reason: `no answer within ${Duration.format(settings.requestTimeout)}` })),
        Effect.tapErrorTag("Transient", (e) =>
          Effect.logWarning(`token endpoint: ${e.reason}; retrying`).pipe(
            Effect.annotateLogs({ grantType: form.grant_type, ...(accountId ? { accountId } : {}) })
          )
        ),
        Effect.retry({ schedule: retry, while: (e) => e._tag === "Transient" }),
        Effect.catchTag("Transient", (e) =>
          Effect.fail(new TokenEndpointUnavailable({ reason: `${e.reason}, after retries`, ...(accountId ? { accountId } : {}) }))
        ),
        Effect.withSpan("TokenEndpoint.post", { attributes: { grantType: form.grant_type } })
      )

    const credentials = () => ({ client_id: settings.clientId, client_secret: Redacted.value(settings.clientSecret) })

    return {
      exchangeCode: ({ code, codeVerifier }) =>
        post(
          {
            ...credentials(),
            grant_type: "authorization_code",
            code,
            redirect_uri: settings.redirectUri,
            ...(Option.isSome(codeVerifier) ? { code_verifier: Redacted.value(codeVerifier.value) } : {})
          },
          undefined,
          codeExchangeRetry
        ),
      refresh: ({ accountId, refreshToken }) =>
        post({ ...credentials(), grant_type: "refresh_token", refresh_token: Redacted.value(refreshToken) }, accountId, tokenEndpointRetry)
    }
  })
)

import type { SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { AccountApi } from "./AccountApi.js"
import { authorizationUrl, newCodeVerifier, newState, safeEqual } from "./Authorization.js"
import { type Connection, Connections } from "./Connections.js"
import {
  AuthorizationDenied,
  type AuthorizationError,
  CodeExchangeRefused,
  MalformedCallback,
  type PendingFlowsFull,
  ServiceCallFailed,
  UnknownState
} from "./errors.js"
import { PendingFlows } from "./PendingFlows.js"
import { OAuthClient } from "./OAuthClient.js"
import { TokenEndpoint } from "./TokenEndpoint.js"
import { WorkNotices } from "./WorkNotices.js"

/** The query parameters of a redirect to our callback. */
export interface CallbackParams {
  readonly code?: string | undefined
  readonly state?: string | undefined
  readonly error?: string | undefined
  readonly error_description?: string | undefined
}

export const callbackParams = (url: URL): CallbackParams => ({
  code: url.searchParams.get("code") ?? undefined,
  state: url.searchParams.get("state") ?? undefined,
  error: url.searchParams.get("error") ?? undefined,
  error_description: url.searchParams.get("error_description") ?? undefined
})

/**
 * The authorization code flow, shared by `serve`, `connect` and the tests: build the URL, then on the redirect
 * exchange the code, ask the service whose tokens they are, and store the connection.
 */
export class OAuthFlow extends Context.Tag("account-sync/OAuthFlow")<
  OAuthFlow,
  {
    /** A fresh flow: state and (with `pkce`) a verifier, and the URL that starts it. Not stored. */
    readonly begin: (options: { readonly pkce: boolean }) => Effect.Effect<{
      readonly url: string
      readonly state: string
      readonly verifier: Option.Option<Redacted.Redacted<string>>
    }>
    /**
     * `begin` with PKCE unless the app opted out (SERVICE_PKCE=false), kept in `oauth_pending` so any replica can
     * finish it (serve's /oauth/start for the client at `address`).
     */
    readonly beginStored: (address: string) => Effect.Effect<string, SqlError.SqlError | PendingFlowsFull>
    /** Exchange, identify, store: the connection is active. */
    readonly complete: (input: {
      readonly code: string
      readonly verifier: Option.Option<Redacted.Redacted<string>>
    }) => Effect.Effect<Connection, AuthorizationError | SqlError.SqlError>
    /**
     * serve's /oauth/callback: with `state`, the stored flow must exist and not be expired (it is consumed);
     * without, it is a marketplace-started flow (no state, no PKCE).
     */
    readonly completeStored: (params: CallbackParams) => Effect.Effect<Connection, AuthorizationError | SqlError.SqlError>
    /** A flow this process began and holds in memory (`connect`): the redirect's state must be ours. */
    readonly completeExpected: (
      expected: { readonly state: string; readonly verifier: Option.Option<Redacted.Redacted<string>> },
      params: CallbackParams
    ) => Effect.Effect<Connection, AuthorizationError | SqlError.SqlError>
  }
>() {}

/** The redirect's `error`/`code`, before any state check. */
export const requireCode = (params: CallbackParams): Effect.Effect<string, AuthorizationDenied | MalformedCallback> =>
  params.error !== undefined
    ? Effect.fail(new AuthorizationDenied({ error: params.error, ...(params.error_description ? { description: params.error_description } : {}) }))
    : params.code === undefined || params.code.length === 0
      ? Effect.fail(new MalformedCallback({ reason: "no `code` and no `error` parameter" }))
      : Effect.succeed(params.code)

export const OAuthFlowLive = Layer.effect(
  OAuthFlow,
  Effect.gen(function* () {
    const settings = yield* OAuthClient
    const endpoint = yield* TokenEndpoint
    const api = yield* AccountApi
    const connections = yield* Connections
    const pending = yield* PendingFlows

    const begin = ({ pkce }: { readonly pkce: boolean }) =>
      Effect.sync(() => {
        const state = newState()
        const verifier = pkce ? Option.some(newCodeVerifier()) : Option.none()
        const url = authorizationUrl({
          baseUrl: settings.baseUrl,
          clientId: settings.clientId,
          redirectUri: settings.redirectUri,
          state,
          ...(Option.isSome(verifier) ? { codeVerifier: verifier.value } : {})
        })
        return { url, state, verifier }
      })

    const complete = ({ code, verifier }: { readonly code: string; readonly verifier: Option.Option<Redacted.Redacted<string>> }) =>
      Effect.gen(function* () {
        const tokens = yield* endpoint
          .exchangeCode({ code, codeVerifier: verifier })
          .pipe(Effect.catchTag("InvalidGrant", ({ reason }) => Effect.fail(new CodeExchangeRefused({ reason }))))
        const account = yield* api.identity(tokens.accessToken).pipe(
          Effect.catchTag("TokenRejected", () =>
            Effect.fail(new ServiceCallFailed({ operation: "AccountIdentity", status: 401, reason: "the freshly issued access token was rejected" }))
          )
        )
        const connection = yield* connections.activate({
          accountId: account.id,
          accountName: account.name,
          scopes: Option.getOrElse(tokens.scopes, () => []),
          tokens
        })
        yield* Effect.logInfo(`connected ${account.name} (${account.id})`).pipe(Effect.annotateLogs({ accountId: account.id }))
        // with workers: the new connection's backfill at once
        const notices = yield* Effect.serviceOption(WorkNotices)
        if (Option.isSome(notices)) {
          yield* notices.value.connected(account.id).pipe(
            Effect.catchAll((e) => Effect.logWarning(`${e.message} (the schedule's next tick will enqueue it)`)),
            Effect.annotateLogs({ accountId: account.id })
          )
        }
        return connection
      })

    return {
      begin,
      beginStored: (address) =>
        Effect.gen(function* () {
          const flow = yield* begin({ pkce: settings.pkce })
          yield* pending.save(flow.state, flow.verifier, address)
          return flow.url
        }),
      complete,
      completeStored: (params) =>
        Effect.gen(function* () {
          const code = yield* requireCode(params)
          const verifier = params.state === undefined ? Option.none() : yield* pending.take(params.state)
          return yield* complete({ code, verifier })
        }),
      completeExpected: (expected, params) =>
        Effect.gen(function* () {
          const code = yield* requireCode(params)
          if (params.state === undefined || !safeEqual(params.state, expected.state)) {
            return yield* new UnknownState({ reason: params.state === undefined ? "the redirect has no state" : "state mismatch" })
          }
          return yield* complete({ code, verifier: expected.verifier })
        })
    }
  })
)

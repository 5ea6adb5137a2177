import { Effect } from "effect"
import { AccessTokens } from "./AccessTokens.js"
import { AccountApi } from "./AccountApi.js"
import { Connections } from "./Connections.js"

export type DisconnectOutcome =
  | { readonly _tag: "Disconnected"; readonly accountId: string; readonly appName: string | null }
  /** The service had already ended the connection (revoked): only our side was left to clean up. */
  | { readonly _tag: "AlreadyRevoked"; readonly accountId: string }
  | { readonly _tag: "AlreadyDisconnected"; readonly accountId: string }

/**
 * Our side of "disconnect": appDisconnect at the service (its userErrors fail the call and change nothing here),
 * then tokens deleted and the connection marked disconnected.
 */
export const disconnectAccount = (accountId: string) =>
  Effect.gen(function* () {
    const tokens = yield* AccessTokens
    const api = yield* AccountApi
    const connections = yield* Connections
    const token = yield* tokens.get(accountId).pipe(
      Effect.map((t) => ({ _tag: "Token" as const, token: t })),
      Effect.catchTags({
        TokenRefused: () => Effect.succeed({ _tag: "Revoked" as const }),
        NotConnected: (e) =>
          e.status === "revoked"
            ? Effect.succeed({ _tag: "Revoked" as const })
            : e.status === "disconnected"
              ? Effect.succeed({ _tag: "Gone" as const })
              : Effect.fail(e)
      })
    )
    if (token._tag === "Gone") return { _tag: "AlreadyDisconnected", accountId } satisfies DisconnectOutcome
    if (token._tag === "Revoked") {
      yield* connections.markDisconnected(accountId, "disconnect command (the service had already revoked the tokens)")
      return { _tag: "AlreadyRevoked", accountId } satisfies DisconnectOutcome
    }
    const answer = yield* api.appDisconnect(accountId, token.token).pipe(
      Effect.catchTag("TokenRejected", () =>
        tokens.refreshAfterRejection(accountId, token.token).pipe(
          Effect.flatMap((fresh) => api.appDisconnect(accountId, fresh)),
          // refused: the service had ended the connection already (e.g. a webhook we never got)
          Effect.catchTag("TokenRefused", () => Effect.succeed(undefined))
        )
      )
    )
    if (answer === undefined) {
      yield* connections.markDisconnected(accountId, "disconnect command (the service had already revoked the tokens)")
      return { _tag: "AlreadyRevoked", accountId } satisfies DisconnectOutcome
    }
    const { appName } = answer
    yield* connections.markDisconnected(accountId, "disconnect command (appDisconnect)")
    yield* Effect.logInfo("disconnected: appDisconnect accepted, tokens deleted")
    return { _tag: "Disconnected", accountId, appName } satisfies DisconnectOutcome
  }).pipe(Effect.annotateLogs({ accountId }))

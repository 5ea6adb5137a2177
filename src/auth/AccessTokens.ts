import { SqlClient } from "@effect/sql"
import { Clock, Context, Deferred, Duration, Effect, FiberId, Layer, Metric, Option, Redacted } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import * as Metrics from "../observability/metrics.js"
import { Connections } from "./Connections.js"
import { type AccessTokenError, NotConnected, TokenRefused } from "./errors.js"
import { OAuthClient } from "./OAuthClient.js"
import { type IssuedTokens, TokenEndpoint } from "./TokenEndpoint.js"
import { type StoredTokens, TokenStore } from "./TokenStore.js"

/**
 * A valid access token per connected account, refreshed single-flight: one refresh per account at a time in a
 * process, and across processes under a row lock on `oauth_tokens`.
 */
export class AccessTokens extends Context.Tag("account-sync/AccessTokens")<
  AccessTokens,
  {
    /**
     * The stored token while its JWT `exp` is more than the skew away; otherwise a refreshed one. A usable token is
     * kept in memory for up to `recheckAfterMs` before the connection and the store are read again.
     */
    readonly get: (accountId: string) => Effect.Effect<Redacted.Redacted<string>, AccessTokenError>
    /**
     * After the GraphQL endpoint answered 401 for `rejected`: refresh once (or reuse the token another fiber or
     * process already stored in its place) and return the new token. The caller retries its request once.
     */
    readonly refreshAfterRejection: (
      accountId: string,
      rejected: Redacted.Redacted<string>
    ) => Effect.Effect<Redacted.Redacted<string>, AccessTokenError>
    /** The account's credentials as the ServiceClient takes them. */
    readonly credentials: (accountId: string) => AccountCredentials<AccessTokenError>
  }
>() {}

/** What the caller saw that made it want a refresh: a stale version, or a token the API rejected. */
type Trigger = { readonly _tag: "Stale"; readonly version: number } | { readonly _tag: "Rejected"; readonly token: string }

/**
 * How long a usable token is served from memory before the connection's status and the store are read again (a
 * sync asks for the token before every page: two statements and a decryption per page otherwise). A connection
 * revoked or disconnected elsewhere is therefore noticed within this time, or at once when the service rejects the
 * token (401: refreshAfterRejection drops the entry and goes to the database).
 */
export const recheckAfterMs = 1000

/**
 * Over the token store and endpoint. The row lock is held across the token endpoint call on purpose; the call is
 * bounded by its timeout and retry schedule. Database failures are defects here: nothing a caller could do per
 * account (a lost session is retried first for the plain reads; not for a refresh, whose rotated token must commit
 * or be refused). An undecryptable stored token is the account's error (TokenUnreadable): its run fails, others go on.
 */
export const AccessTokensLive = Layer.effect(
  AccessTokens,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* TokenStore
    const endpoint = yield* TokenEndpoint
    const connections = yield* Connections
    const skewMs = Duration.toMillis((yield* OAuthClient).refreshSkew)
    const inflight = new Map<string, Deferred.Deferred<Redacted.Redacted<string>, AccessTokenError>>()
    const recent = new Map<string, { readonly token: Redacted.Redacted<string>; readonly expiresAtMs: number; readonly readAtMs: number }>()
    const remember = (accountId: string, tokens: StoredTokens, nowMs: number) =>
      recent.set(accountId, { token: tokens.accessToken, expiresAtMs: tokens.expiresAt.getTime(), readAtMs: nowMs })

    /**
     * Share one refresh per account among concurrent callers in this process. The refresh runs in its own fiber, so
     * a caller that is interrupted does not cancel it for the others (it is bounded by the endpoint's timeouts).
     */
    const singleFlight = (accountId: string, refresh: Effect.Effect<Redacted.Redacted<string>, AccessTokenError>) =>
      Effect.suspend(() => {
        const running = inflight.get(accountId)
        if (running) return Deferred.await(running)
        const deferred = Deferred.unsafeMake<Redacted.Redacted<string>, AccessTokenError>(FiberId.none)
        inflight.set(accountId, deferred)
        return refresh.pipe(
          Effect.exit,
          Effect.flatMap((exit) => Effect.zipRight(Effect.sync(() => inflight.delete(accountId)), Deferred.done(deferred, exit))),
          Effect.forkDaemon,
          Effect.zipRight(Deferred.await(deferred))
        )
      })

    const isUsable = (tokens: StoredTokens, nowMs: number, marginMs: number) => tokens.expiresAt.getTime() - nowMs > marginMs

    const refreshLocked = (accountId: string, trigger: Trigger) =>
      sql.withTransaction(
        Effect.gen(function* () {
          // lock order as everywhere else: the connection row, then its tokens
          const status = yield* connections.statusForUpdate(accountId)
          if (status !== "active") return yield* new NotConnected({ accountId, status })
          const current = yield* store.readForUpdate(accountId)
          if (Option.isNone(current)) return yield* new NotConnected({ accountId, status: "active, without tokens" })
          const stored = current.value
          const nowMs = yield* Clock.currentTimeMillis
          const changedMeanwhile =
            trigger._tag === "Stale"
              ? stored.version !== trigger.version
              : Redacted.value(stored.accessToken) !== trigger.token
          // someone else refreshed while we waited for the lock: theirs is good while it has not expired
          if (changedMeanwhile && isUsable(stored, nowMs, 0)) {
            yield* Effect.logDebug("reusing the token another refresh stored")
            return stored.accessToken
          }
          if (Option.isNone(stored.refreshToken)) {
            const reason = "no refresh token stored"
            yield* connections.markRevoked(accountId, reason)
            return { _tag: "Refused" as const, reason }
          }
          const issued = yield* endpoint.refresh({ accountId, refreshToken: stored.refreshToken.value }).pipe(
            Effect.catchTag("InvalidGrant", ({ reason }) =>
              // the row is locked, so the token we sent is still the stored one: the refusal is real
              connections.markRevoked(accountId, `refresh refused: ${reason}`).pipe(
                Effect.zipRight(Effect.logWarning(`refresh refused (${reason}); connection marked revoked`)),
                Effect.as({ _tag: "Refused" as const, reason })
              )
            )
          )
          if ("_tag" in issued) return issued
          // a refresh token the service did not replace is written again too: under the current key (rotation)
          const tokens: IssuedTokens = Option.isSome(issued.refreshToken) ? issued : { ...issued, refreshToken: stored.refreshToken }
          const written = yield* store.write(accountId, tokens, "refresh")
          remember(accountId, written, nowMs)
          yield* Metric.increment(Metrics.forAccount(Metrics.tokenRefreshes, accountId))
          yield* Effect.logInfo(`refreshed the access token (valid until ${written.expiresAt.toISOString()})`)
          return written.accessToken
        })
      ).pipe(
        // the revocation must commit, so the refusal is raised after the transaction
        Effect.flatMap((result) =>
          Redacted.isRedacted(result) ? Effect.succeed(result) : Effect.fail(new TokenRefused({ accountId, reason: result.reason }))
        ),
        Effect.catchTags({ SqlError: Effect.die }),
        Effect.onError(() => Effect.sync(() => recent.delete(accountId))),
        Effect.tapError((e) =>
          e._tag === "NotConnected" ? Effect.void : Metric.increment(Metrics.forAccount(Metrics.tokenRefreshFailures, accountId))
        ),
        Effect.tapError((e) =>
          e._tag === "ClientMisconfigured" || e._tag === "TokenEndpointUnavailable" || e._tag === "TokenUnreadable" ? Effect.logError(e.message) : Effect.void
        ),
        Effect.annotateLogs({ accountId }),
        Effect.withSpan("AccessTokens.refresh", { attributes: { accountId } })
      )

    const get = (accountId: string) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const kept = recent.get(accountId)
        if (kept && nowMs - kept.readAtMs < recheckAfterMs && nowMs >= kept.readAtMs && kept.expiresAtMs - nowMs > skewMs) {
          return kept.token
        }
        recent.delete(accountId)
        const status = yield* Effect.orDie(connections.status(accountId))
        if (status !== "active") return yield* new NotConnected({ accountId, status })
        // a plain read: repeated on a new session when the old one was lost (a terminated backend, a reset socket)
        const current = yield* retryOnConnectionLoss(store.read(accountId)).pipe(Effect.catchTags({ SqlError: Effect.die }))
        if (Option.isNone(current)) return yield* new NotConnected({ accountId, status: "active, without tokens" })
        if (isUsable(current.value, nowMs, skewMs)) {
          remember(accountId, current.value, nowMs)
          return current.value.accessToken
        }
        return yield* singleFlight(accountId, refreshLocked(accountId, { _tag: "Stale", version: current.value.version }))
      })

    const refreshAfterRejection = (accountId: string, rejected: Redacted.Redacted<string>) =>
      Effect.zipRight(
        Effect.sync(() => recent.delete(accountId)),
        singleFlight(accountId, refreshLocked(accountId, { _tag: "Rejected", token: Redacted.value(rejected) }))
      )

    return AccessTokens.of({
      get,
      refreshAfterRejection,
      credentials: (accountId) => ({
        accountId,
        token: get(accountId),
        refreshAfterRejection: (rejected) => refreshAfterRejection(accountId, rejected)
      })
    })
  })
)

import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Deferred, Duration, Effect, FiberId, Layer, Metric, Option, Redacted } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import type { ReadAlongside } from "../db/readAlongside.js"
import { connectionLossRetry, isLostConnectionError, lostConnectionAsFailure, retryOnConnectionLoss } from "../db/connectionRetry.js"
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
    /**
     * The read `get` makes when its kept copy lapsed (the connection's status and the token), for a statement at the
     * start of an account's run to carry: the copy then lasts the run (unless it takes over `recheckAfterMs`). `get`
     * serves what it read, or reads alone when it was not usable.
     */
    readonly readAlongside: (accountId: string) => Effect.Effect<ReadAlongside>
    /** The account's credentials as the ServiceClient takes them. */
    readonly credentials: (accountId: string) => AccountCredentials<AccessTokenError>
  }
>() {}

/** What the caller saw that made it want a refresh: a stale version, or a token the API rejected. */
type Trigger = { readonly _tag: "Stale"; readonly version: number } | { readonly _tag: "Rejected"; readonly token: string }

/**
 * How long a usable token is served from memory before the connection's status and the store are read again (a
 * sync asks for the token before every page: two statements and a decryption per page otherwise, per account of a
 * fleet). A connection revoked or disconnected elsewhere is therefore noticed within this time (a run's heartbeat
 * period), or at once when the service rejects the token (401: refreshAfterRejection drops the entry and goes to the
 * database), which is how a revocation at the service stops the account.
 */
export const recheckAfterMs = 15_000

/**
 * A refresh's answer not yet stored: the service has already replaced the refresh token it was given, so the new one
 * exists nowhere else. Kept in memory until it is written.
 */
interface Unsaved {
  readonly tokens: IssuedTokens
  /** The stored version the refresh replaced: the write is made only while it is still the stored one. */
  readonly replaces: number
  readonly issuedAtMs: number
}

/**
 * Over the token store and endpoint. The row lock is held across the token endpoint call on purpose (single-flight
 * across processes); the call is bounded by its timeout and retry schedule. When the locked session is lost after the
 * endpoint answered (the COMMIT of a rotated refresh token never reached the database), the answer is kept in memory
 * and written on a new session, under the lock again, only if the token it replaces is still the stored one.
 * Database failures are defects here, after those retries: nothing a caller could do per account. An undecryptable
 * stored token is the account's error (TokenUnreadable): its run fails, others go on.
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
    const unsaved = new Map<string, Unsaved>()
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

    /** How a refresh ended: a token stored by it, a token stored by someone else meanwhile, or a refusal. */
    type Outcome =
      | { readonly _tag: "Refreshed"; readonly stored: StoredTokens }
      | { readonly _tag: "Reused"; readonly token: Redacted.Redacted<string> }
      | { readonly _tag: "Refused"; readonly reason: string }

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
            return { _tag: "Reused", token: stored.accessToken } satisfies Outcome
          }
          if (Option.isNone(stored.refreshToken)) {
            const reason = "no refresh token stored"
            yield* connections.markRevoked(accountId, reason)
            return { _tag: "Refused", reason } satisfies Outcome
          }
          const issued = yield* endpoint.refresh({ accountId, refreshToken: stored.refreshToken.value }).pipe(
            Effect.catchTag("InvalidGrant", ({ reason }) =>
              // the row is locked, so the token we sent is still the stored one: the refusal is real
              connections.markRevoked(accountId, `refresh refused: ${reason}`).pipe(
                Effect.zipRight(Effect.logWarning(`refresh refused (${reason}); connection marked revoked`)),
                Effect.as({ _tag: "Refused", reason } satisfies Outcome)
              )
            )
          )
          if ("_tag" in issued) return issued
          // a refresh token the service did not replace is written again too: under the current key (rotation)
          const tokens: IssuedTokens = Option.isSome(issued.refreshToken) ? issued : { ...issued, refreshToken: stored.refreshToken }
          // from here until the COMMIT is acknowledged, the answer lives only in this process
          unsaved.set(accountId, { tokens, replaces: stored.version, issuedAtMs: nowMs })
          const written = yield* store.write(accountId, tokens, "refresh")
          yield* Effect.logInfo(`refreshed the access token (valid until ${written.expiresAt.toISOString()})`)
          return { _tag: "Refreshed", stored: written } satisfies Outcome
        })
      ).pipe(Effect.tap(() => Effect.sync(() => unsaved.delete(accountId))))

    /**
     * Writes a refresh's answer whose first write was lost with its session: on a new session, under the locks, and
     * only while the token it replaced is still the stored one (else the stored one is newer: a reconnect, or our
     * COMMIT did land and only its acknowledgement was lost). Repeated on a lost session; kept in memory until it lands.
     */
    const saveUnsaved = (accountId: string, pending: Unsaved) =>
      retryOnConnectionLoss(
        sql.withTransaction(
          Effect.gen(function* () {
            const status = yield* connections.statusForUpdate(accountId)
            const current = yield* store.readForUpdate(accountId)
            if (Option.isNone(current)) return yield* new NotConnected({ accountId, status })
            if (current.value.version !== pending.replaces) {
              yield* Effect.logInfo("the refreshed token was stored already (or replaced since): using the stored one")
              return { _tag: "Reused", token: current.value.accessToken } satisfies Outcome
            }
            const written = yield* store.write(accountId, pending.tokens, "refresh")
            yield* Effect.logWarning("the database session of a refresh was lost before its commit: its new tokens are stored on a new session")
            if (yield* connections.restoreAfterLostRefresh(accountId, new Date(pending.issuedAtMs))) {
              yield* Effect.logWarning("a refresh elsewhere was refused meanwhile (it sent the refresh token ours replaced): connection active again")
            }
            return { _tag: "Refreshed", stored: written } satisfies Outcome
          })
        )
      ).pipe(
        Effect.tap(() => Effect.sync(() => unsaved.delete(accountId))),
        // the connection was disconnected meanwhile (its tokens deleted): there is nothing to save them to
        Effect.tapErrorTag("NotConnected", () => Effect.sync(() => unsaved.delete(accountId)))
      )

    const refresh = (accountId: string, trigger: Trigger) =>
      Effect.suspend((): Effect.Effect<Outcome, AccessTokenError | SqlError.SqlError> => {
        const pending = unsaved.get(accountId)
        if (pending) return saveUnsaved(accountId, pending)
        return refreshLocked(accountId, trigger).pipe(
          lostConnectionAsFailure,
          Effect.catchIf(
            (e) => isLostConnectionError(e) && unsaved.has(accountId),
            () => saveUnsaved(accountId, unsaved.get(accountId)!)
          )
        )
      }).pipe(
        // a session lost before the endpoint answered: the refresh is begun again on a new one
        Effect.retry({ schedule: connectionLossRetry, while: isLostConnectionError }),
        Effect.flatMap((outcome) =>
          Effect.gen(function* () {
            switch (outcome._tag) {
              case "Reused":
                return outcome.token
              case "Refused":
                // the revocation had to commit, so the refusal is raised after the transaction
                return yield* new TokenRefused({ accountId, reason: outcome.reason })
              case "Refreshed":
                remember(accountId, outcome.stored, yield* Clock.currentTimeMillis)
                yield* Metric.increment(Metrics.forAccount(Metrics.tokenRefreshes, accountId))
                return outcome.stored.accessToken
            }
          })
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

    const keptFor = (accountId: string, nowMs: number) => {
      const kept = recent.get(accountId)
      return kept && nowMs - kept.readAtMs < recheckAfterMs && nowMs >= kept.readAtMs && kept.expiresAtMs - nowMs > skewMs ? kept.token : undefined
    }

    // offered even while the kept copy is fresh: one about to lapse would be read alone a moment later, mid-run
    const readAlongside = (accountId: string) =>
      Effect.map(
        Clock.currentTimeMillis,
        (readAtMs): ReadAlongside => ({
          query: store.statusAndTokenQuery(accountId),
          // only an active connection's usable token is kept; for anything else the kept copy goes, and `get` reads
          // again alone and answers (not connected, a refresh, an unreadable token)
          use: (rows) =>
            store.statusAndTokenFrom(rows).pipe(
              Effect.map(({ status, tokens }) =>
                status === "active" && Option.isSome(tokens) && isUsable(tokens.value, readAtMs, skewMs) && !unsaved.has(accountId) ? tokens.value : undefined
              ),
              Effect.catchAllCause(() => Effect.succeed(undefined)),
              Effect.flatMap((usable) => Effect.sync(() => (usable === undefined ? void recent.delete(accountId) : void remember(accountId, usable, readAtMs))))
            )
        })
      )

    const get = (accountId: string) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const kept = keptFor(accountId, nowMs)
        if (kept !== undefined) return kept
        recent.delete(accountId)
        // a plain read: repeated on a new session when the old one was lost (a terminated backend, a reset socket)
        const { status, tokens: current } = yield* retryOnConnectionLoss(store.readWithStatus(accountId)).pipe(
          Effect.catchTags({ SqlError: Effect.die })
        )
        if (status !== "active") return yield* new NotConnected({ accountId, status })
        if (Option.isNone(current)) return yield* new NotConnected({ accountId, status: "active, without tokens" })
        // a refresh answer still to be saved goes first, even while the stored token is usable
        if (isUsable(current.value, nowMs, skewMs) && !unsaved.has(accountId)) {
          remember(accountId, current.value, nowMs)
          return current.value.accessToken
        }
        return yield* singleFlight(accountId, refresh(accountId, { _tag: "Stale", version: current.value.version }))
      })

    const refreshAfterRejection = (accountId: string, rejected: Redacted.Redacted<string>) =>
      Effect.zipRight(
        Effect.sync(() => recent.delete(accountId)),
        singleFlight(accountId, refresh(accountId, { _tag: "Rejected", token: Redacted.value(rejected) }))
      )

    return AccessTokens.of({
      get,
      refreshAfterRejection,
      readAlongside,
      credentials: (accountId) => ({
        accountId,
        token: get(accountId),
        refreshAfterRejection: (rejected) => refreshAfterRejection(accountId, rejected)
      })
    })
  })
)

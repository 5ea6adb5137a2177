import { Context, type Effect, type Redacted } from "effect"
import type { AccessTokenError } from "./errors.js"

/**
 * A valid access token per connected account. The live layer (AccessTokensLive) refreshes single-flight:
 * one refresh per account at a time in a process, and across processes under a row lock on `oauth_tokens`.
 */
export class AccessTokens extends Context.Tag("account-sync/AccessTokens")<
  AccessTokens,
  {
    /**
     * The stored token while its JWT `exp` is more than the skew away; otherwise a refreshed one. The live layer
     * keeps a usable token in memory for up to a second before it reads the connection and the store again.
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
  }
>() {}

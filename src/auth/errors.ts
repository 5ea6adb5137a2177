import { Data } from "effect"
import { printable } from "../observability/printable.js"

/** The service refused the account's refresh token (`invalid_grant`): the connection is now `revoked`. */
export class TokenRefused extends Data.TaggedError("TokenRefused")<{
  readonly accountId: string
  readonly reason: string
}> {
  override get message() {
    return `account ${this.accountId}: the service refused its refresh token (${this.reason}); reconnect the account`
  }
}

/** `invalid_client` at the token endpoint: our client id/secret are wrong (the secret was likely regenerated). */
export class ClientMisconfigured extends Data.TaggedError("ClientMisconfigured")<{
  readonly reason: string
}> {
  override get message() {
    return `the service rejected our client credentials (${this.reason}): SERVICE_CLIENT_ID/SERVICE_CLIENT_SECRET are wrong or the secret was regenerated; stored tokens were kept`
  }
}

/** The account has no usable connection (never connected, revoked or disconnected). */
export class NotConnected extends Data.TaggedError("NotConnected")<{
  readonly accountId: string
  readonly status: string
}> {
  override get message() {
    return `account ${this.accountId} is not connected (status: ${this.status})`
  }
}

/** The token endpoint could not be reached or answered unexpectedly, after bounded retries. */
export class TokenEndpointUnavailable extends Data.TaggedError("TokenEndpointUnavailable")<{
  readonly accountId?: string
  readonly reason: string
}> {
  override get message() {
    return `token endpoint unavailable${this.accountId ? ` for account ${this.accountId}` : ""}: ${this.reason}`
  }
}

export type AccessTokenError = TokenRefused | ClientMisconfigured | NotConnected | TokenEndpointUnavailable | TokenUnreadable

/** Stored ciphertext did not authenticate: none of the configured keys is the one the value was written with. */
export class TokenKeyMismatch extends Data.TaggedError("TokenKeyMismatch")<{
  /** What could not be read, e.g. "access token of account X". Never the value. */
  readonly what: string
  /** The id of the key the value names as its own, when it names one. */
  readonly keyId?: string
}> {
  override get message() {
    return `cannot decrypt the ${this.what}${this.keyId ? ` (written under key id ${this.keyId})` : ""}: TOKEN_ENCRYPTION_KEY does not match the key the tokens were stored with, nor does any of TOKEN_ENCRYPTION_OLD_KEYS`
  }
}

/**
 * An account's stored token cannot be decrypted with the configured keys (written under another key, or damaged):
 * that account's run fails; the others go on. Reconnecting the account stores new tokens under the current key.
 */
export class TokenUnreadable extends Data.TaggedError("TokenUnreadable")<{
  readonly accountId: string
  /** What could not be read, e.g. "refresh token". */
  readonly what: string
  readonly keyId?: string
}> {
  override get message() {
    const why = this.keyId
      ? `was written under key id ${this.keyId}, which is neither TOKEN_ENCRYPTION_KEY nor any of TOKEN_ENCRYPTION_OLD_KEYS`
      : "was written under another key than TOKEN_ENCRYPTION_KEY and TOKEN_ENCRYPTION_OLD_KEYS, or is damaged"
    return `account ${this.accountId}: token cannot be decrypted with the configured key (its ${this.what} ${why}); configure that key, or reconnect the account`
  }
}

/** The token endpoint answered `invalid_grant` to a code exchange (code expired, reused, or wrong PKCE verifier). */
export class CodeExchangeRefused extends Data.TaggedError("CodeExchangeRefused")<{
  readonly reason: string
}> {
  override get message() {
    return `the service refused the authorization code (${this.reason}); start the connection again`
  }
}

/** The redirect carried `error=...` (the admin denied access, or the service refused the request). */
export class AuthorizationDenied extends Data.TaggedError("AuthorizationDenied")<{
  readonly error: string
  readonly description?: string
}> {
  override get message() {
    // both come from the redirect's query string: anyone can put anything there
    return `authorization was not granted: ${printable(this.error, 100)}${this.description ? ` (${printable(this.description)})` : ""}`
  }
}

/** A callback whose `state` matches no flow we started (forged, replayed, or from another flow). */
export class UnknownState extends Data.TaggedError("UnknownState")<{
  readonly reason: string
}> {
  override get message() {
    return `the authorization callback does not belong to a flow started here: ${this.reason}`
  }
}

/** The flow was started more than 10 minutes ago (the authorization code lifetime). */
export class PendingFlowExpired extends Data.TaggedError("PendingFlowExpired")<{
  readonly startedAt: Date
}> {
  override get message() {
    return `the authorization flow started at ${this.startedAt.toISOString()} has expired (10 minutes); start it again`
  }
}

/** The callback had neither `code` nor `error`. */
export class MalformedCallback extends Data.TaggedError("MalformedCallback")<{
  readonly reason: string
}> {
  override get message() {
    return `malformed authorization callback: ${this.reason}`
  }
}

/** A GraphQL call made by the auth module (account identity, appDisconnect) failed. */
export class ServiceCallFailed extends Data.TaggedError("ServiceCallFailed")<{
  readonly operation: string
  readonly accountId?: string
  readonly status?: number
  readonly reason: string
}> {
  override get message() {
    return `${this.operation}${this.accountId ? ` for account ${this.accountId}` : ""} failed${this.status ? ` (HTTP ${this.status})` : ""}: ${this.reason}`
  }
}

/** The service reported `userErrors` for appDisconnect. */
export class DisconnectRejected extends Data.TaggedError("DisconnectRejected")<{
  readonly accountId: string
  readonly messages: ReadonlyArray<string>
}> {
  override get message() {
    return `the service refused to disconnect account ${this.accountId}: ${this.messages.join("; ")}`
  }
}

export type AuthorizationError =
  | CodeExchangeRefused
  | AuthorizationDenied
  | UnknownState
  | PendingFlowExpired
  | MalformedCallback
  | ServiceCallFailed
  | ClientMisconfigured
  | TokenEndpointUnavailable
  | TokenKeyMismatch
  | TokenUnreadable

/**
 * As many authorization flows are pending as OAUTH_PENDING_PER_ADDRESS allows for the client's address (answered 429)
 * or OAUTH_PENDING_MAX in all (503), expired ones already dropped.
 */
export class PendingFlowsFull extends Data.TaggedError("PendingFlowsFull")<{
  readonly max: number
  /** The client address whose own cap (OAUTH_PENDING_PER_ADDRESS) is reached; absent: the cap of all (OAUTH_PENDING_MAX). */
  readonly address?: string
}> {
  override get message() {
    return this.address === undefined
      ? `${this.max} authorization flows are already pending (OAUTH_PENDING_MAX); no new one is started until some finish or expire`
      : `${this.max} authorization flows started from ${printable(this.address, 100)} are already pending (OAUTH_PENDING_PER_ADDRESS); no new one from there until some finish or expire`
  }
}

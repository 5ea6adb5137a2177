import { Data } from "effect"

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

export type AccessTokenError = TokenRefused | ClientMisconfigured | NotConnected | TokenEndpointUnavailable

import { Data } from "effect"

/** An RFC 6749 error answer of the token endpoint: `{ error, error_description }` with `status`. */
export class OAuthFailure extends Data.TaggedError("OAuthFailure")<{
  readonly status: 400 | 401
  readonly error: "invalid_request" | "invalid_client" | "invalid_grant" | "unsupported_grant_type" | "unauthorized_client"
  readonly description: string
}> {
  override get message() {
    return `${this.error}: ${this.description}`
  }
}

/** An admin operation named something that does not exist (unknown app, account, job) or got bad arguments. */
export class AdminRejected extends Data.TaggedError("AdminRejected")<{
  readonly reason: string
}> {
  override get message() {
    return this.reason
  }
}

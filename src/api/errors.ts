import { Data, type Duration } from "effect"
import { printable } from "../observability/printable.js"

/** What the service reported about the account's cost bucket with an answer. */
export interface ThrottleStatus {
  readonly maximumAvailable: number
  readonly currentlyAvailable: number
  readonly restoreRate: number
}

export interface QueryCost {
  readonly requestedQueryCost: number
  readonly actualQueryCost: number
  readonly throttleStatus: ThrottleStatus
}

/** HTTP 401 at the GraphQL endpoint: the access token is invalid or expired. */
export class GraphqlTokenInvalid extends Data.TaggedError("GraphqlTokenInvalid")<{
  readonly operation: string
  readonly accountId?: string
}> {
  override get message() {
    return `${this.operation}: the service rejected the access token (401)${this.accountId ? ` of account ${this.accountId}` : ""}`
  }
}

/** `THROTTLED`: the query's requested cost exceeds what the account's bucket holds right now. Costs nothing. */
export class Throttled extends Data.TaggedError("Throttled")<{
  readonly operation: string
  readonly cost: QueryCost | undefined
}> {
  override get message() {
    const c = this.cost
    return `${this.operation}: throttled${c ? ` (requested ${c.requestedQueryCost}, available ${c.throttleStatus.currentlyAvailable})` : ""}`
  }
}

/** HTTP 429 from the service's request-rate guard. */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly operation: string
  readonly retryAfter: Duration.Duration
}> {
  override get message() {
    return `${this.operation}: request rate limited (429)`
  }
}

/** `ACCESS_DENIED`: the app lacks the scope for what the query reads. Not retried. */
export class PermissionDenied extends Data.TaggedError("PermissionDenied")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `${this.operation}: permission denied (missing scope?): ${this.detail}`
  }
}

/** 5xx, connection reset or refused, timeout, truncated or non-JSON body: worth a bounded retry. */
export class TransientFailure extends Data.TaggedError("TransientFailure")<{
  readonly operation: string
  readonly reason: string
}> {
  override get message() {
    return `${this.operation}: transient failure: ${this.reason}`
  }
}

/** Any other GraphQL error (invalid argument, unknown field, bad page size...): a bug on our side, not retried. */
export class QueryFailed extends Data.TaggedError("QueryFailed")<{
  readonly operation: string
  readonly code: string | undefined
  readonly detail: string
}> {
  override get message() {
    return `${this.operation}: query failed${this.code ? ` (${this.code})` : ""}: ${this.detail}`
  }
}

/** A well-formed answer that does not have the shape of a GraphQL response (or of the data we asked for). */
export class UnexpectedResponse extends Data.TaggedError("UnexpectedResponse")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `${this.operation}: unexpected response: ${this.detail}`
  }
}

/** A mutation answered with `userErrors`. */
export class MutationUserErrors extends Data.TaggedError("MutationUserErrors")<{
  readonly operation: string
  readonly messages: ReadonlyArray<string>
}> {
  override get message() {
    return `${this.operation}: ${this.messages.join("; ")}`
  }
}

/**
 * The service answered with another API version than the one we pin (SERVICE_GRAPHQL_VERSION): ours was removed and the
 * oldest supported version answered instead. A query's answer is not used (unless SERVICE_GRAPHQL_VERSION_REPLACED=allow).
 */
export class ApiVersionReplaced extends Data.TaggedError("ApiVersionReplaced")<{
  readonly operation: string
  readonly pinned: string
  readonly answered: string
}> {
  override get message() {
    return `${this.operation}: the service replaced the pinned API version ${this.pinned} (SERVICE_GRAPHQL_VERSION) with ${printable(this.answered, 40)}; nothing of its answer was used`
  }
}

/**
 * The service's answer is larger than GRAPHQL_MAX_RESPONSE_BYTES: not read further (a page is far smaller; a proxy
 * or a misbehaving service could send anything), and not retried.
 */
export class ResponseTooLarge extends Data.TaggedError("ResponseTooLarge")<{
  readonly operation: string
  readonly limit: number
}> {
  override get message() {
    return `${this.operation}: the service's answer is larger than GRAPHQL_MAX_RESPONSE_BYTES (${this.limit} bytes); it was not read (raise the setting if such answers are expected)`
  }
}

export type ServiceError =
  | ApiVersionReplaced
  | ResponseTooLarge
  | GraphqlTokenInvalid
  | Throttled
  | RateLimited
  | PermissionDenied
  | TransientFailure
  | QueryFailed
  | UnexpectedResponse

import type { SqlError } from "@effect/sql"
import { Cause, Exit, Option, Predicate } from "effect"
import type { GraphqlTokenInvalid, ServiceError } from "../api/errors.js"
import type { AccessTokenError, NotConnected, TokenRefused } from "../auth/errors.js"
import type { AccountLockLost, ConnectionShapeInvalid, NodeSchemaMismatch, PagingStuck } from "./errors.js"

/** Every way a stream's run can fail, as typed errors. */
export type StreamError =
  | ServiceError
  | AccessTokenError
  | NodeSchemaMismatch
  | ConnectionShapeInvalid
  | PagingStuck
  | AccountLockLost
  | SqlError.SqlError

/** How a stream's run (one `sync_runs` row) ended. */
export type RunOutcome = "succeeded" | "failed" | "revoked" | "interrupted" | "skipped"

/** The failures that mean the account's connection is gone (reconnect it), not that the run went wrong. */
export type Revocation = TokenRefused | NotConnected | GraphqlTokenInvalid

export const isRevocation = (error: unknown): error is Revocation =>
  Predicate.isTagged(error, "TokenRefused") || Predicate.isTagged(error, "NotConnected") || Predicate.isTagged(error, "GraphqlTokenInvalid")

/** One line for a person: the error's message (for a database error, also what the database said). */
export const describeError = (error: StreamError): string => {
  if (Predicate.isTagged(error, "SqlError")) {
    const cause = (error as SqlError.SqlError).cause
    return `database error: ${error.message}${cause instanceof Error ? `: ${cause.message}` : ""}`
  }
  return error.message
}

export interface Classified {
  readonly outcome: Exclude<RunOutcome, "skipped">
  /** What went wrong, for `sync_runs.error` and the summary (absent on success and on an interruption from outside). */
  readonly error?: string
  /** The typed failure, when there was one. */
  readonly failure?: StreamError
}

/** How a stream's run ended, from its Exit: the one place that turns causes into outcomes. */
export const classify = (exit: Exit.Exit<unknown, StreamError>): Classified => {
  if (Exit.isSuccess(exit)) return { outcome: "succeeded" }
  if (Cause.isInterruptedOnly(exit.cause)) return { outcome: "interrupted" }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    // another process may hold the account now: this run stopped writing it, as if interrupted
    if (Predicate.isTagged(error, "AccountLockLost")) return { outcome: "interrupted", error: error.message, failure: error }
    return { outcome: isRevocation(error) ? "revoked" : "failed", error: describeError(error), failure: error }
  }
  return { outcome: "failed", error: `defect: ${Cause.pretty(exit.cause).split("\n")[0] ?? "unknown"}` }
}

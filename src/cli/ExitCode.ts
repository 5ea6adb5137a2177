import { Data } from "effect"

/** Exit codes of every command (README "Exit codes"). */
export const ExitCodes = {
  ok: 0,
  failure: 1,
  usage: 2,
  needsReconnect: 3,
  /** The service answered from another API version than SERVICE_GRAPHQL_VERSION (ours was removed). */
  apiVersionReplaced: 4,
  sigint: 130,
  sigterm: 143
} as const

/** Ends the program with `code` after printing `message` (when given) to stderr. */
export class ExitWith extends Data.TaggedError("ExitWith")<{
  readonly code: number
  readonly message?: string
}> {}

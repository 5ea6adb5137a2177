import type { SqlError } from "@effect/sql"
import { type Cause, Effect, type ParseResult } from "effect"

/**
 * A row that does not decode, or a statement that returned no row where one must be, is a defect (the schema and
 * the code disagree; nothing a caller could do), while a SqlError stays an error (a lost session is retried by the
 * service that ran it).
 */
export const rowsOrDie = <A, R>(
  effect: Effect.Effect<A, ParseResult.ParseError | Cause.NoSuchElementException | SqlError.SqlError, R>
): Effect.Effect<A, SqlError.SqlError, R> =>
  Effect.catchIf(effect, (e): e is ParseResult.ParseError | Cause.NoSuchElementException => e._tag !== "SqlError", (e) => Effect.die(e))

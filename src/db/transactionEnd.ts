import { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * @effect/sql turns a COMMIT or ROLLBACK that fails into a defect. A session terminated under a transaction (a
 * failover, `pg_terminate_backend`, a restart of Postgres) is an error to retry, not a bug: this makes it one again,
 * so the caller's retry and error handling see it (a worker's loop died of it instead of starting again).
 */
export const transactionEndFailures = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.catchSomeDefect(effect, (defect) => (defect instanceof SqlError.SqlError ? Option.some(Effect.fail(defect)) : Option.none()))

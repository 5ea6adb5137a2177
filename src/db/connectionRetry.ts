import type { SqlError } from "@effect/sql"
import { Effect, Option, Predicate, Schedule } from "effect"

/** SQLSTATE classes/codes that mean the session is gone, not that the statement was wrong. */
const connectionStates = new Set(["57P01", "57P02", "57P03"]) // admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now
const socketCodes = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTCONN", "ECONNABORTED"])
const lostMessages = /connection terminated|terminating connection|connection error|not queryable|timeout exceeded when trying to connect|server closed the connection/i

/**
 * Whether a SqlError means the database session was lost (terminated backend, reset socket, pool could not
 * connect), as opposed to a constraint, syntax or data error, which a retry would only repeat.
 */
export const isConnectionLost = (error: SqlError.SqlError): boolean => {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  const code = typeof cause?.code === "string" ? cause.code : undefined
  if (code !== undefined) {
    if (code.startsWith("08") || connectionStates.has(code) || socketCodes.has(code)) return true
    // any other SQLSTATE is the server judging the statement: not a connection problem
    if (/^[0-9A-Z]{5}$/.test(code)) return false
  }
  const message = typeof cause?.message === "string" ? cause.message : ""
  return lostMessages.test(message) || error.message === "Failed to acquire connection" || error.message === "Connection error"
}

/** Whether the database refused a value of the statement (SQLSTATE class 22, data exception: out of range, bad format...). */
export const isDataException = (error: SqlError.SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && code.startsWith("22")
}

/** 4 attempts in all: 200 ms, 400 ms, 800 ms apart (jittered). */
export const connectionLossRetry = Schedule.exponential("200 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))

const isSqlError = (u: unknown): u is SqlError.SqlError => Predicate.isTagged(u, "SqlError")

/** Whether `u` is a SqlError that means the session was lost. */
export const isLostConnectionError = (u: unknown): u is SqlError.SqlError => isSqlError(u) && isConnectionLost(u)

/**
 * `withTransaction` turns a failed ROLLBACK or COMMIT into a defect, and on a terminated session the ROLLBACK after
 * the failed statement fails too: such a defect becomes the SqlError it is, like any other lost connection.
 */
export const lostConnectionAsFailure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.catchSomeDefect(effect, (defect) => (isLostConnectionError(defect) ? Option.some(Effect.fail(defect)) : Option.none()))

/**
 * Re-runs a database effect that failed because the connection was lost. Only for effects that are whole
 * transactions or single statements whose repetition is harmless (the failed attempt committed nothing, or a
 * repeat of what it committed changes nothing).
 *
 * `withTransaction` turns a failed ROLLBACK or COMMIT into a defect, and on a terminated session the ROLLBACK after
 * the failed statement fails too: such a defect is a lost connection like any other.
 */
export const retryOnConnectionLoss = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  lostConnectionAsFailure(effect).pipe(Effect.retry({ schedule: connectionLossRetry, while: isLostConnectionError }))

/**
 * A service whose every method is retried on a lost connection (`retryOnConnectionLoss`): applied once where the
 * service is built, instead of at each call site. Only for services whose methods are single statements or whole
 * transactions, each harmless to repeat.
 */
export const retryingOnConnectionLoss = <S extends { readonly [K in keyof S]: (...args: Array<any>) => Effect.Effect<any, any, any> }>(
  service: S
): S => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(service) as Array<keyof S & string>) {
    const method = service[key]
    out[key] = (...args: Array<unknown>) => retryOnConnectionLoss(method(...args))
  }
  return out as S
}

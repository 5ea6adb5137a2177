import { SqlClient, type SqlConnection, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema, Scope, SynchronizedRef } from "effect"
import { isConnectionLost, retryOnConnectionLoss } from "../db/connectionRetry.js"

/**
 * The two-int advisory lock key of an account ($1). Advisory locks are database-wide: the schema is part of the key,
 * so deployments (or test files) sharing a database under different DB_SCHEMAs never skip each other's accounts.
 */
export const accountLockKey = "hashtext('account-sync:' || current_schema()), hashtext($1)"

const LockedRow = Schema.Struct({ locked: Schema.Boolean })
const decodeLocked = Schema.decodeUnknown(Schema.Array(LockedRow))

/**
 * Whoever writes an account's rows (a sync run, the webhook consumer) holds its lock, so no account is written by
 * two processes at once. `lock` holds the account until the caller's scope closes; false when another holds it.
 */
export class AccountLocks extends Context.Tag("account-sync/AccountLocks")<
  AccountLocks,
  { readonly lock: (accountId: string) => Effect.Effect<boolean, SqlError.SqlError, Scope.Scope> }
>() {}

/**
 * One database session holds the advisory locks of every account, instead of one reserved connection per account:
 * `--concurrency 50` needs one connection for the locks, not fifty idle ones beside the pool. When that session is
 * lost its locks go with it; the next lock request opens a new one. (The embedded Postgres runs every connection in
 * one session, so there the locks exclude nothing between processes.)
 */
export const AccountLocksLive = Layer.scoped(
  AccountLocks,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const current = yield* SynchronizedRef.make<Option.Option<SqlConnection.Connection>>(Option.none())
    // one statement at a time on the shared session (a pg client must not be given overlapping queries)
    const oneAtATime = yield* Effect.makeSemaphore(1)
    const session = SynchronizedRef.modifyEffect(current, (held) =>
      Option.isSome(held)
        ? Effect.succeed([held.value, held] as const)
        : Effect.map(Scope.extend(sql.reserve, scope), (connection) => [connection, Option.some(connection)] as const)
    )
    const execute = (statement: string, accountId: string) =>
      Effect.flatMap(session, (connection) => connection.execute(statement, [accountId], undefined)).pipe(
        oneAtATime.withPermits(1),
        Effect.tapError((e) => (isConnectionLost(e) ? SynchronizedRef.set(current, Option.none()) : Effect.void))
      )
    const tryLock = (accountId: string) =>
      execute(`SELECT pg_try_advisory_lock(${accountLockKey}) AS locked`, accountId).pipe(
        Effect.flatMap((rows) => Effect.orDie(decodeLocked(rows))),
        Effect.map((rows) => rows[0]?.locked === true),
        retryOnConnectionLoss
      )
    return AccountLocks.of({
      lock: (accountId) =>
        Effect.gen(function* () {
          const locked = yield* tryLock(accountId)
          if (locked) yield* Effect.addFinalizer(() => execute(`SELECT pg_advisory_unlock(${accountLockKey})`, accountId).pipe(Effect.ignore))
          return locked
        })
    })
  })
)

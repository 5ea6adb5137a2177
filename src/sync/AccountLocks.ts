import { SqlClient, type SqlConnection, type SqlError, type Statement } from "@effect/sql"
import { Context, Deferred, Effect, FiberRef, Layer, Option, Predicate, Queue, Ref, Schema, Scope } from "effect"
import { isConnectionLost, retryOnConnectionLoss } from "../db/connectionRetry.js"
import { DatabaseTopology } from "../db/Database.js"
import { AccountLockLost } from "./errors.js"

/**
 * The two-int advisory lock key of an account ($1). Advisory locks are database-wide: the schema is part of the key,
 * so deployments (or test files) sharing a database under different DB_SCHEMAs never skip each other's accounts.
 */
export const accountLockKey = "hashtext('account-sync:' || current_schema()), hashtext($1)"

const LockedRow = Schema.Struct({ locked: Schema.Boolean, pid: Schema.Number, started: Schema.NullOr(Schema.String) })
const decodeLocked = Schema.decodeUnknown(Schema.Array(LockedRow))

/** A statement for the session that holds every account's lock, and where its rows go. */
interface LockStatement {
  readonly statement: string
  readonly accountId: string
  readonly done: Deferred.Deferred<ReadonlyArray<unknown>, SqlError.SqlError>
}

/** The database session that holds an account's lock: its backend's pid and start (a pid alone may be reused). */
export interface LockSession {
  readonly pid: number
  readonly backendStart: string
}

/**
 * An account's lock as this fiber's work holds it. The landing checks, in each page's own transaction, that the
 * session still holds it; when that session died (terminated, idle_session_timeout, a dropped connection) the lock
 * is taken again on a new one if no other process took it meanwhile, else the run stops writing the account.
 */
export interface AccountLease {
  readonly accountId: string
  /** The session holding the lock now. */
  readonly session: Effect.Effect<LockSession>
  /** Takes the lost lock again on a live session: false when another process holds it now. */
  readonly retake: Effect.Effect<boolean, SqlError.SqlError>
}

/**
 * Whether `session` still holds the account's lock (an SQL condition, true or false): the lock granted on that
 * backend, which started when the lock was taken. Read from the functions under the views pg_locks and
 * pg_stat_activity, the activity of that one backend only: the views' joins cost more to plan (about 0.5 ms) than
 * the rest of the check, and every page statement asks it.
 */
export const leaseHeld = (sql: SqlClient.SqlClient, accountId: string, session: LockSession): Statement.Fragment =>
  sql`(EXISTS (SELECT 1 FROM pg_lock_status() l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.pid = ${session.pid}
      AND l.classid = hashtext('account-sync:' || current_schema())::oid AND l.objid = hashtext(${accountId})::oid)
    AND EXISTS (SELECT 1 FROM pg_stat_get_activity(${session.pid}) a WHERE a.backend_start = ${session.backendStart}::timestamptz))`

/** The lease of the account whose lock this fiber (and the fibers it forks) took; none outside a lock. */
export const currentAccountLease: FiberRef.FiberRef<Option.Option<AccountLease>> = FiberRef.unsafeMake(Option.none())

/**
 * `write` with the session holding the account's lock this fiber took (none: no lock, or the embedded database),
 * which it checks in its own transaction: when the lock was lost with its session, it is taken again and `write`
 * runs once more (the first wrote nothing), unless another process holds the account now.
 */
export const underLease = <A, E, R>(accountId: string, write: (session: LockSession | undefined) => Effect.Effect<A, E | AccountLockLost, R>) =>
  Effect.flatMap(FiberRef.get(currentAccountLease), (held) => {
    const lease = Option.getOrUndefined(Option.filter(held, (l) => l.accountId === accountId))
    if (lease === undefined) return write(undefined)
    return Effect.flatMap(lease.session, write).pipe(
      Effect.catchIf(
        (e): e is AccountLockLost => Predicate.isTagged(e, "AccountLockLost"),
        (lost) => Effect.flatMap(lease.retake, (retaken) => (retaken ? Effect.flatMap(lease.session, write) : Effect.fail(lost)))
      )
    )
  })

/** Fails, inside the caller's transaction, when `session` no longer holds the account. */
const stillHeld = (sql: SqlClient.SqlClient, accountId: string, stream: string, session: LockSession | undefined) =>
  session === undefined
    ? Effect.void
    : Effect.flatMap(sql<{ held: boolean }>`SELECT ${leaseHeld(sql, accountId, session)} AS held`, (rows) =>
        rows[0]?.held === true ? Effect.void : Effect.fail(new AccountLockLost({ accountId, stream }))
      )

/**
 * `write` as one transaction of the run that holds the account (`stream`'s writes): the lock checked first in it
 * (and taken again once when its session was lost), never stopped halfway, retried whole on a lost connection. Only
 * for writes whose repeat after a lost COMMIT acknowledgement changes nothing.
 */
export const leasedTransaction = <A, E, R>(sql: SqlClient.SqlClient, accountId: string, stream: string, write: Effect.Effect<A, E, R>) =>
  underLease(accountId, (session) =>
    sql.withTransaction(Effect.zipRight(stillHeld(sql, accountId, stream, session), write)).pipe(Effect.uninterruptible, retryOnConnectionLoss)
  )

/**
 * Whoever writes an account's rows (a sync run, the webhook consumer) holds its lock, so no account is written by
 * two processes at once. `lock` holds the account until the caller's scope closes; false when another holds it.
 * While held, the caller's fiber carries the lease (currentAccountLease), which the landing checks page by page: a
 * lock lost with its session is taken again, or the writing stops before another process can write.
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
    // the embedded database is one session: its locks exclude nothing, and there is no other session to lose them to
    const { singleSession } = yield* DatabaseTopology
    const scope = yield* Effect.scope
    // the session, opened by the first statement (and again after it was lost); only the runner below touches it
    const current = yield* Ref.make<Option.Option<SqlConnection.Connection>>(Option.none())
    const session = Effect.flatMap(Ref.get(current), (held) =>
      Option.isSome(held)
        ? Effect.succeed(held.value)
        : Scope.extend(sql.reserve, scope).pipe(
            // the session sits idle between lock and unlock: a server's idle_session_timeout (Postgres 14+) must not end it
            Effect.tap((connection) =>
              singleSession
                ? Effect.void
                : connection.execute("SELECT set_config('idle_session_timeout', '0', false) WHERE current_setting('server_version_num')::int >= 140000", [], undefined)
            ),
            Effect.tap((connection) => Ref.set(current, Option.some(connection)))
          )
    )
    /**
     * One statement at a time on the shared session (a pg client must not be given overlapping queries), in the
     * order asked, by one fiber: a queue, not a semaphore. Effect's Semaphore wakes every waiter at each release and
     * the losers wait again one level deeper: with 500 accounts starting at once each waiting fiber grew a stack of
     * ~480 frames (150 MB of a worker's heap) and the wake-ups cost CPU quadratic in the waiters. A request whose
     * caller was interrupted before its turn is not run (a lock taken for nobody would be held until the session ends).
     */
    const requests = yield* Queue.unbounded<LockStatement>()
    const runOne = (request: LockStatement) =>
      Effect.flatMap(Deferred.isDone(request.done), (abandoned) =>
        abandoned
          ? Effect.void
          : Effect.flatMap(session, (connection) => connection.execute(request.statement, [request.accountId], undefined)).pipe(
              Effect.tapError((e) => (isConnectionLost(e) ? Ref.set(current, Option.none()) : Effect.void)),
              Effect.exit,
              Effect.flatMap((exit) => Deferred.done(request.done, exit))
            )
      )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(requests), runOne)))
    const execute = (statement: string, accountId: string) =>
      Effect.flatMap(Deferred.make<ReadonlyArray<unknown>, SqlError.SqlError>(), (done) =>
        Queue.offer(requests, { statement, accountId, done }).pipe(
          Effect.zipRight(Deferred.await(done)),
          Effect.onInterrupt(() => Deferred.interrupt(done))
        )
      )
    const tryLock = (accountId: string) =>
      execute(
        `SELECT pg_try_advisory_lock(${accountLockKey}) AS locked, pg_backend_pid() AS pid,
          (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS started`,
        accountId
      ).pipe(
        Effect.flatMap((rows) => Effect.orDie(decodeLocked(rows))),
        Effect.map((rows) => rows[0]),
        retryOnConnectionLoss
      )
    return AccountLocks.of({
      lock: (accountId) =>
        Effect.gen(function* () {
          const row = yield* tryLock(accountId)
          if (row?.locked !== true) return false
          yield* Effect.addFinalizer(() => execute(`SELECT pg_advisory_unlock(${accountLockKey})`, accountId).pipe(Effect.ignore))
          if (!singleSession && row.started !== null) {
            const holder = yield* Ref.make<LockSession>({ pid: row.pid, backendStart: row.started })
            const retake = Effect.gen(function* () {
              const again = yield* tryLock(accountId)
              if (again?.locked !== true || again.started === null) return false
              yield* Ref.set(holder, { pid: again.pid, backendStart: again.started })
              yield* Effect.logWarning("the session holding the account's lock was lost; the lock was taken again on a new one")
              return true
            })
            yield* Effect.locallyScoped(currentAccountLease, Option.some({ accountId, session: Ref.get(holder), retake }))
          }
          return true
        })
    })
  })
)

import { SqlClient, type SqlConnection, type SqlError, SqlSchema, type Statement } from "@effect/sql"
import { Config, Context, Deferred, Either, Duration, Effect, FiberRef, Layer, Option, Queue, Ref, Schedule, Schema, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { isConnectionLost, retryOnConnectionLoss } from "../db/connectionRetry.js"
import { DatabaseTopology } from "../db/Database.js"
import { rowsOrDie } from "../db/rows.js"
import { AccountLockLost } from "./errors.js"
import { acquireForRunStatement, acquireStatement, Holder, holderStatement, releaseStatement, Renewed, renewStatement, Taken, TakenForRunRow } from "./leaseStatements.js"
import { limitPausedTransaction } from "../db/pausedTransaction.js"

/**
 * How long a lease lasts unless its holder renews it (every third of this). A holder that stops answering (paused,
 * partitioned, hung) loses its accounts this long after its last renewal; a process that dies loses them at once
 * (its session ends). With the queue's heartbeat (QUEUE_HEARTBEAT_SECONDS + QUEUE_MONITOR_SECONDS, 20 s by default)
 * a hung worker's accounts move within about 30 s of its last renewal.
 */
export const LeaseSettingsConfig = Config.integer("ACCOUNT_LEASE_SECONDS").pipe(
  Config.withDefault(30),
  Config.validate({ message: "ACCOUNT_LEASE_SECONDS: expected a whole number of seconds, at least 3", validation: (n) => n >= 3 })
)

/** An account's lease as this fiber's run holds it: the epoch (fencing token) it took. */
export interface HeldLease {
  readonly accountId: string
  readonly epoch: number
}

/** The lease of the account this fiber (and the fibers it forks) holds; none outside a lease. */
export const currentAccountLease: FiberRef.FiberRef<Option.Option<HeldLease>> = FiberRef.unsafeMake(Option.none())

/**
 * Whether `lease` is still the account's (an SQL condition): its epoch unchanged. The row is key-share locked until
 * the statement's transaction ends, so a new holder's bump of the epoch waits for a write that checked it, and a
 * write that checks after the bump sees the new epoch: no write of an old holder lands after a new holder took over.
 */
export const leaseHeld = (sql: SqlClient.SqlClient, lease: HeldLease): Statement.Fragment =>
  sql`EXISTS (SELECT 1 FROM account_leases WHERE account_id = ${lease.accountId} AND epoch = ${lease.epoch} FOR KEY SHARE)`

/** The lease this fiber holds on `accountId`, if any. */
export const heldLease = (accountId: string) =>
  Effect.map(FiberRef.get(currentAccountLease), (held) => Option.getOrUndefined(Option.filter(held, (l) => l.accountId === accountId)))

/**
 * The condition a single-statement write of `accountId` adds to its WHERE: the fiber's lease still held (true when
 * the fiber holds none: a caller outside a run). A fenced statement writes nothing.
 */
export const leaseFence = (sql: SqlClient.SqlClient, accountId: string) =>
  Effect.map(heldLease(accountId), (lease) => (lease === undefined ? sql`true` : leaseHeld(sql, lease)))

/** The epoch of the lease this fiber holds on `accountId` (null outside a lease): what a run's row records. */
export const leaseEpoch = (accountId: string) => Effect.map(heldLease(accountId), (lease) => lease?.epoch ?? null)

/**
 * Fails, inside the caller's transaction, when the fiber's lease of the account moved to another holder. The
 * transaction may not sit idle for long (limitPausedTransaction): the check's key-share lock holds off the next
 * holder's bump, and a process paused mid-transaction must not keep its account that way.
 */
export const stillHeld = (sql: SqlClient.SqlClient, accountId: string, stream: string) =>
  Effect.flatMap(leaseFence(sql, accountId), (fence) =>
    Effect.flatMap(
      rowsOrDie(
        SqlSchema.single({
          Request: Schema.Void,
          Result: Schema.Struct({ held: Schema.Boolean }),
          execute: () => sql`SELECT ${limitPausedTransaction(sql)} IS NOT NULL AND ${fence} AS held`
        })(undefined)
      ),
      (row) => (row.held ? Effect.void : Effect.fail(new AccountLockLost({ accountId, stream })))
    )
  )

/**
 * `write` as one transaction of the run that holds the account (`stream`'s writes): the lease checked first in it,
 * never stopped halfway, retried whole on a lost connection. Only for writes whose repeat after a lost COMMIT
 * acknowledgement changes nothing.
 */
export const leasedTransaction = <A, E, R>(sql: SqlClient.SqlClient, accountId: string, stream: string, write: Effect.Effect<A, E, R>) =>
  sql.withTransaction(Effect.zipRight(stillHeld(sql, accountId, stream), write)).pipe(Effect.uninterruptible, retryOnConnectionLoss)

/**
 * A write made by the lease's release statement (one statement, not two): a data-modifying statement whose $1 is the
 * account and whose own parameters start at $3.
 */
export interface WriteOnRelease {
  readonly statement: string
  readonly params: ReadonlyArray<unknown>
}

/** A lease taken for a run: the runs it closed (see acquireForRun), and a write to make with its release. */
export interface TakenForRun {
  readonly abandoned: number | undefined
  readonly onRelease: (write: WriteOnRelease) => Effect.Effect<void>
}

/** Why a lease was not taken: who holds it, and whether that is this very process. */
export interface HeldElsewhere {
  readonly holder: string
  readonly thisProcess: boolean
}

/**
 * Whoever writes an account's rows (a sync run, the change-event consumer) holds its lease, so no account is written
 * by two runs at once, in two processes or in one. `acquire` holds it until the caller's scope closes, or answers
 * who holds it. While held, the caller's fiber carries it (currentAccountLease) and every write checks it.
 */
export class AccountLeases extends Context.Tag("account-sync/AccountLeases")<
  AccountLeases,
  {
    readonly acquire: (accountId: string) => Effect.Effect<Option.Option<HeldElsewhere>, SqlError.SqlError, Scope.Scope>
    /**
     * `acquire` for a sync run, which closes the account's runs left `running` under earlier leases: in the taking
     * statement when the previous holder released the lease (none of its writes can still land), `abandoned` the
     * number closed; else `abandoned` is undefined and the caller closes them in a statement of its own (a hung
     * holder's write may have landed after the taking statement's snapshot).
     */
    readonly acquireForRun: (accountId: string) => Effect.Effect<Either.Either<TakenForRun, HeldElsewhere>, SqlError.SqlError, Scope.Scope>
  }
>() {}

/** A statement for the lease session, and where its rows go. */
interface LeaseStatement {
  readonly statement: string
  readonly params: ReadonlyArray<unknown>
  readonly done: Deferred.Deferred<ReadonlyArray<unknown>, SqlError.SqlError>
}

/**
 * One database session takes, renews and releases every lease of this process, in the order asked, by one fiber: the
 * session the leases name (a lease whose session ended is free), instead of one connection per account. It waits at
 * most 2 s for a lock (a write under an old epoch finishing), and never times out idle. When it is lost, the next
 * statement opens a new one and the next renewal moves the leases to it (unless another process took them meanwhile).
 */
export const AccountLeasesLive = Layer.scoped(
  AccountLeases,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { singleSession } = yield* DatabaseTopology
    const seconds = yield* LeaseSettingsConfig
    const instance = randomUUID()
    const scope = yield* Effect.scope
    const current = yield* Ref.make<Option.Option<SqlConnection.Connection>>(Option.none())
    const session = Effect.flatMap(Ref.get(current), (open) =>
      Option.isSome(open)
        ? Effect.succeed(open.value)
        : Scope.extend(sql.reserve, scope).pipe(
            Effect.tap((connection) =>
              singleSession
                ? Effect.void
                : connection.execute(
                    "SELECT set_config('lock_timeout', '2s', false), set_config('idle_session_timeout', '0', false) WHERE current_setting('server_version_num')::int >= 140000",
                    [],
                    undefined
                  )
            ),
            Effect.tap((connection) => Ref.set(current, Option.some(connection)))
          )
    )
    // a queue, not a semaphore: Effect 3's Semaphore wakes every waiter at each release (e4f842f, 500 accounts at once)
    const requests = yield* Queue.unbounded<LeaseStatement>()
    const runOne = (request: LeaseStatement) =>
      Effect.flatMap(Deferred.isDone(request.done), (abandoned) =>
        abandoned
          ? Effect.void
          : Effect.flatMap(session, (connection) => connection.execute(request.statement, request.params, undefined)).pipe(
              Effect.tapError((e) => (isConnectionLost(e) ? Ref.set(current, Option.none()) : Effect.void)),
              Effect.exit,
              Effect.flatMap((exit) => Deferred.done(request.done, exit))
            )
      )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(requests), runOne)))
    const execute = (statement: string, params: ReadonlyArray<unknown>) =>
      Effect.flatMap(Deferred.make<ReadonlyArray<unknown>, SqlError.SqlError>(), (done) =>
        Queue.offer(requests, { statement, params, done }).pipe(
          Effect.zipRight(Deferred.await(done)),
          Effect.onInterrupt(() => Deferred.interrupt(done))
        )
      ).pipe(retryOnConnectionLoss)

    // the leases this process holds, by account: renewed together
    const held = yield* Ref.make(new Map<string, number>())
    const renew = Effect.gen(function* () {
      const leases = [...(yield* Ref.get(held))]
      if (leases.length === 0) return
      const rows = yield* Effect.flatMap(
        execute(renewStatement, [leases.map(([a]) => a), leases.map(([, e]) => e), seconds, singleSession]),
        (r) => Effect.orDie(Schema.decodeUnknown(Schema.Array(Renewed))(r))
      )
      const renewed = new Set(rows.map((r) => r.account_id))
      for (const [accountId, epoch] of leases) {
        if (renewed.has(accountId)) continue
        yield* Ref.update(held, (m) => (m.get(accountId) === epoch && m.delete(accountId), m))
        yield* Effect.logWarning(`the lease of account ${accountId} moved to another holder: this process writes nothing more for it`)
      }
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`renewing the accounts' leases: ${e.message}`)))
    yield* Effect.forkScoped(Effect.repeat(renew, Schedule.spaced(Duration.millis((seconds * 1000) / 3))))

    const take = <A extends { readonly epoch: number }, I>(
      accountId: string,
      statement: string,
      result: Schema.Schema<A, I>
    ): Effect.Effect<Either.Either<{ readonly taken: A; readonly onRelease: TakenForRun["onRelease"] }, HeldElsewhere>, SqlError.SqlError, Scope.Scope> =>
      Effect.gen(function* () {
        const rows = yield* execute(statement, [accountId, instance, singleSession, seconds]).pipe(
          // a write under the old epoch still running past lock_timeout: the account is busy, as if held
          Effect.catchIf(
            (e) => (e.cause as { code?: unknown } | undefined)?.code === "55P03",
            () => Effect.succeed([] as ReadonlyArray<unknown>)
          ),
          Effect.flatMap((r) => Effect.orDie(Schema.decodeUnknown(Schema.Array(result))(r)))
        )
        const taken = rows[0]
        if (taken === undefined) {
          const holders = yield* Effect.flatMap(execute(holderStatement, [accountId, instance]), (r) => Effect.orDie(Schema.decodeUnknown(Schema.Array(Holder))(r)))
          const row = holders[0]
          return Either.left<HeldElsewhere>({ holder: row?.holder ?? "another process", thisProcess: row?.ours ?? false })
        }
        const lease: HeldLease = { accountId, epoch: taken.epoch }
        yield* Ref.update(held, (m) => m.set(accountId, lease.epoch))
        const alsoWrite = yield* Ref.make<WriteOnRelease | undefined>(undefined)
        yield* Effect.addFinalizer(() =>
          Ref.update(held, (m) => (m.get(accountId) === lease.epoch && m.delete(accountId), m)).pipe(
            Effect.zipRight(Ref.get(alsoWrite)),
            Effect.flatMap((also) =>
              also === undefined
                ? execute(releaseStatement, [accountId, lease.epoch])
                : execute(`WITH released AS (${releaseStatement}), also AS (${also.statement}) SELECT 1`, [accountId, lease.epoch, ...also.params])
            ),
            Effect.ignore
          )
        )
        yield* Effect.locallyScoped(currentAccountLease, Option.some(lease))
        return Either.right({ taken, onRelease: (write: WriteOnRelease) => Ref.set(alsoWrite, write) })
      })
    const acquire = (accountId: string) => Effect.map(take(accountId, acquireStatement, Taken), Either.getLeft)
    const acquireForRun = (accountId: string) =>
      Effect.map(
        take(accountId, acquireForRunStatement, TakenForRunRow),
        Either.map(({ taken, onRelease }): TakenForRun => ({ abandoned: taken.released ? taken.abandoned : undefined, onRelease }))
      )

    return AccountLeases.of({ acquire, acquireForRun })
  })
)

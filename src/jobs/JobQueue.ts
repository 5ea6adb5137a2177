import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Data, Duration, Effect, Layer, Option, Predicate, Redacted, Runtime } from "effect"
import type { Db as IDatabase, JobWithMetadata } from "pg-boss"
import { DatabaseConfig } from "../config.js"
import { DatabaseTopology } from "../db/Database.js"
import { transactionEndFailures } from "../db/transactionEnd.js"
import { type AccountJob, decodeAccountJob, priorityOf, QueueNames } from "./JobKinds.js"
import { JobSettings, type JobSettingsShape } from "./JobSettings.js"
import { WorkNoticeFailed, WorkNotices } from "../auth/WorkNotices.js"
import { queueSchemaAccess } from "./queueSchemaAccess.js"
import { limitPausedTransaction } from "../db/pausedTransaction.js"

/** pg-boss refused or failed a call: which one, and what it said. */
export class QueueError extends Data.TaggedError("QueueError")<{ readonly operation: string; readonly cause: unknown }> {
  override get message() {
    return `job queue: ${this.operation} failed: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

/** The queue needs sessions of its own (row locks, SKIP LOCKED between processes): the embedded Postgres has one. */
export class QueueUnavailable extends Data.TaggedError("QueueUnavailable")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** A job this worker claimed: pg-boss's id and attempt (its fence), and what it asks for. */
export interface ClaimedJob {
  readonly id: string
  readonly retryCount: number
  readonly job: AccountJob
  /** When pg-boss handed it out. */
  readonly claimedAtMs: number
  /** Its last attempt was failed by pg-boss because the worker holding it stopped beating (a failover). */
  readonly failedOver: boolean
}

export interface JobQueueShape {
  /** pg-boss's schema in the database. */
  readonly schema: string
  /**
   * Enqueues work for an account. Inside `sql.withTransaction` it is written on that transaction's connection and
   * commits (or rolls back) with it. Change events collapse: while an events job of the account waits, another one
   * is not added (pg-boss's throttle slot of one second, the next slot when this one's job has already started).
   */
  readonly enqueue: (job: AccountJob, options?: { readonly startAfter?: Date }) => Effect.Effect<void, QueueError>
  /**
   * Many jobs in one statement (the schedule's tick: a thousand accounts due at once were a thousand round trips, and
   * the tick, not the workers, set the pace). No throttle slots: the caller leaves out accounts that have a job waiting.
   */
  readonly enqueueMany: (jobs: ReadonlyArray<AccountJob>) => Effect.Effect<void, QueueError>
  /** Up to `max` jobs, most overdue first, never a second one of an account that has one active; backfills capped across workers. */
  readonly claim: (max: number) => Effect.Effect<ReadonlyArray<ClaimedJob>, QueueError>
  /** Refreshes the heartbeat of jobs in hand; answers the ids still held (a job missing was failed over elsewhere). */
  readonly heartbeat: (jobs: ReadonlyArray<ClaimedJob>) => Effect.Effect<ReadonlySet<string>, QueueError>
  /** Settles a job done; with `next`, its follow-up is enqueued in the same transaction. */
  readonly complete: (job: ClaimedJob, next?: AccountJob, startAfter?: Date) => Effect.Effect<void, QueueError | SqlError.SqlError>
  /** Fails the attempt: pg-boss retries it with backoff, then moves it to the dead letters. */
  readonly fail: (job: ClaimedJob, reason: string) => Effect.Effect<void, QueueError>
  /** One tick of the schedule now (dropped while another tick waits). */
  readonly tick: Effect.Effect<void, QueueError>
  /** A tick the cron or `tick` enqueued, taken by this worker: true when there was one. */
  readonly claimTick: Effect.Effect<Option.Option<{ readonly id: string; readonly retryCount: number }>, QueueError>
  readonly completeTick: (tick: { readonly id: string; readonly retryCount: number }) => Effect.Effect<void, QueueError>
}

/** The queue service: pg-boss wrapped, every Promise kept inside; a scoped resource (started, then stopped). */
export class JobQueue extends Context.Tag("account-sync/JobQueue")<JobQueue, JobQueueShape>() {}

export interface JobQueueOptions {
  /** Runs pg-boss's supervisor (heartbeat and expiry checks, retention) and its cron: a worker does, serve does not. */
  readonly supervise: boolean
  /** A name for this instance in pg-boss's registry (a worker: host and pid). */
  readonly instanceName?: string
}

const attempt = (job: { readonly id: string; readonly retryCount: number }) => ({ id: job.id, retryCount: job.retryCount })

/** What pg-boss's supervisor records on a job whose worker stopped beating (plans.js, failJobsByHeartbeat). */
const heartbeatTimeout = "job heartbeat timeout"
/** Above any priority priorityOf gives (at most 1,000,000,000): a failed-over job is claimed before all waiting work. */
const failedOverPriority = 1_000_000_001

/** The queue options every job of the account queue carries (retries, heartbeat, expiry). */
const accountQueueOptions = (settings: JobSettingsShape) => ({
  policy: "singleton" as const,
  retryLimit: settings.retryLimit,
  retryDelay: settings.retryDelaySeconds,
  retryBackoff: true,
  retryDelayMax: settings.retryDelayMaxSeconds,
  heartbeatSeconds: settings.heartbeatSeconds,
  // a slice, then the page in flight, with room to spare: the heartbeat, not this, is what detects a dead worker
  expireInSeconds: Math.ceil(Duration.toSeconds(settings.slice)) + 900,
  deleteAfterSeconds: 24 * 3600,
  deadLetter: QueueNames.deadLetters
})

export const makeJobQueue = (options: JobQueueOptions) =>
  Effect.gen(function* () {
    const settings = yield* JobSettings
    const database = yield* DatabaseConfig
    const sql = yield* SqlClient.SqlClient
    if ((yield* DatabaseTopology).singleSession || Option.isNone(database.url)) {
      return yield* new QueueUnavailable({
        reason:
          "the job queue needs a Postgres server (DATABASE_URL): the embedded database is one session, so row locks and SKIP LOCKED exclude nothing between workers; run `sync`/`backfill`/`serve` there instead"
      })
    }
    const schema = Option.getOrElse(settings.schema, () => `${database.schema}_queue`)
    const access = yield* queueSchemaAccess(schema).pipe(Effect.mapError((cause) => new QueueError({ operation: "start", cause })))
    if (access._tag === "Missing") return yield* new QueueUnavailable({ reason: `job queue: ${access.reason}` })
    // loaded only by what uses the queue (serve and connect with WORKERS, worker, status): not by sync or backfill
    const { PgBoss } = yield* Effect.promise(() => import("pg-boss"))
    const boss = new PgBoss({
      connectionString: Redacted.value(database.url.value),
      schema,
      max: 4,
      application_name: `${database.applicationName} queue`,
      supervise: options.supervise,
      schedule: options.supervise,
      migrate: true,
      // a schema that is there (roles.sql makes it, the app role's) is used as it is: see queueSchemaAccess
      createSchema: access.createSchema,
      monitorIntervalSeconds: settings.monitorSeconds,
      superviseIntervalSeconds: settings.monitorSeconds,
      cronMonitorIntervalSeconds: 10,
      cronWorkerIntervalSeconds: 5,
      instanceName: options.instanceName ?? "account-sync",
      openTelemetry: { enabled: false }
    })
    const call = <A>(operation: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (cause) => new QueueError({ operation, cause }) })
    // pg-boss reports what its background loops met (a lost connection...) as events: logged, never thrown
    const runtime = yield* Effect.runtime<never>()
    boss.on("error", (error) => Runtime.runFork(runtime)(Effect.logWarning(`job queue: ${error instanceof Error ? error.message : String(error)}`)))

    const refusedStart = (e: QueueError) =>
      new QueueUnavailable({
        reason: `job queue: Postgres refused the role ${access.role} a privilege pg-boss needs in its schema ${schema} (${e.cause instanceof Error ? e.cause.message : String(e.cause)}); the schema and its tables must be that role's: as an admin, ALTER SCHEMA ${schema} OWNER TO ${access.role} and the same for its tables (or run config/postgres/roles.sql again on a schema it makes)`
      })
    yield* Effect.acquireRelease(
      call("start", () => boss.start({ attempts: 5 })).pipe(
        Effect.catchIf((e) => Predicate.hasProperty(e.cause, "code") && e.cause.code === "42501", (e) => Effect.fail(refusedStart(e)))
      ),
      () => call("stop", () => boss.stop({ graceful: true, timeout: 10_000 })).pipe(Effect.ignore)
    )
    yield* call("create queues", async () => {
      if (!(await boss.getQueue(QueueNames.deadLetters))) await boss.createQueue(QueueNames.deadLetters, { deleteAfterSeconds: 14 * 24 * 3600 })
      const accountOptions = accountQueueOptions(settings)
      if (!(await boss.getQueue(QueueNames.accounts))) await boss.createQueue(QueueNames.accounts, accountOptions)
      else {
        const { policy: _policy, ...changeable } = accountOptions
        await boss.updateQueue(QueueNames.accounts, changeable)
      }
      if (!(await boss.getQueue(QueueNames.tick))) await boss.createQueue(QueueNames.tick, { policy: "stately", retryLimit: 1, expireInSeconds: 300 })
      // the cron: pg-boss sends one tick per occurrence however many instances run it
      if (options.supervise) await boss.schedule(QueueNames.tick, settings.cron, {}, { tz: "UTC" })
    })

    /** Our SqlClient as a pg-boss database: inside `sql.withTransaction`, that transaction's connection. */
    const ourDatabase = Effect.map(Effect.runtime<never>(), (rt): IDatabase => ({
      executeSql: (text, values) => Runtime.runPromise(rt)(Effect.map(sql.unsafe(text, values as ReadonlyArray<unknown> | undefined), (rows) => ({ rows: [...rows] })))
    }))

    const sendOptions = (job: AccountJob, nowMs: number, startAfter: Date | undefined, db: IDatabase) => ({
      db,
      singletonKey: job.accountId,
      priority: priorityOf(job, nowMs),
      ...(startAfter ? { startAfter } : {}),
      ...(job.kind === "backfill" ? { group: { id: "backfill" } } : {}),
      // repeats collapse into the events job that waits (see enqueue)
      ...(job.kind === "events" ? { singletonSeconds: 1, singletonNextSlot: true } : {})
    })

    const enqueue: JobQueueShape["enqueue"] = (job, enqueueOptions) =>
      Effect.gen(function* () {
        const db = yield* ourDatabase
        const now = yield* Clock.currentTimeMillis
        yield* call(`enqueue ${job.kind} of account ${job.accountId}`, () => boss.send(QueueNames.accounts, job, sendOptions(job, now, enqueueOptions?.startAfter, db)))
      })

    const enqueueMany: JobQueueShape["enqueueMany"] = (jobs) =>
      Effect.gen(function* () {
        if (jobs.length === 0) return
        const db = yield* ourDatabase
        const now = yield* Clock.currentTimeMillis
        const inserts = jobs.map((job) => ({
          data: job,
          singletonKey: job.accountId,
          priority: priorityOf(job, now),
          ...(job.kind === "backfill" ? { group: { id: "backfill" } } : {})
        }))
        yield* call(`enqueue ${jobs.length} jobs`, () => boss.insert(QueueNames.accounts, inserts, { db }))
      })

    /**
     * A job pg-boss failed because its worker stopped beating (a dead or hung worker, not a failure of the work) waits
     * out no retry delay: it is due now, ahead of every waiting job (the backfill cap's included), and resumes from its
     * checkpoints. pg-boss applies the queue's retry delay to every failure alike, so this moves it back; the attempt
     * still counts against the retry limit (a job that kills each worker that takes it ends in the dead letters).
     */
    const resumeFailedOver = sql`
      UPDATE ${sql(schema)}.job SET start_after = now(), priority = ${failedOverPriority}
      WHERE name = ${QueueNames.accounts} AND state = 'retry' AND start_after > now()
        AND output -> 'value' ->> 'message' = ${heartbeatTimeout}`

    /**
     * A worker paused inside one of the queue's transactions (the claim, a completion with its follow-up) would hold
     * its row locks, and with them every live worker's claim and the supervisor's failovers, for as long as it is
     * paused: Postgres ends its session instead. In the transaction's first statement.
     */
    const limitPause = limitPausedTransaction(sql)

    /**
     * The claim's transaction holds off the supervisor's failing of the jobs whose heartbeat is half its timeout old
     * (their workers may be dead): its DELETE of such a job waits for the claim to commit. Without it, a failure
     * committed between resumeFailedOver and the fetch freed the backfill cap's places to the waiting backfills,
     * while the failed-over jobs waited out their retry delay behind them (seen at 34 and 37.6 s in CI). A live
     * worker beats every third of the timeout: its jobs are not locked. Its own statement, so that resumeFailedOver
     * (the next) sees a failure it waited for.
     */
    const holdOffFailovers = sql`
      SELECT ${limitPause}, (SELECT count(*) FROM (
        SELECT 1 FROM ${sql(schema)}.job
        WHERE name = ${QueueNames.accounts} AND state = 'active' AND heartbeat_seconds IS NOT NULL
          AND heartbeat_on < now() - heartbeat_seconds * interval '500 milliseconds'
        FOR KEY SHARE) AS dying)`

    const claim: JobQueueShape["claim"] = (max) =>
      Effect.gen(function* () {
        // in the fetch's transaction: a failover the supervisor committed before it is claimed first
        const jobs: ReadonlyArray<JobWithMetadata<unknown>> = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* holdOffFailovers
            yield* resumeFailedOver
            const db = yield* ourDatabase
            return yield* call("claim", () =>
              boss.fetch(QueueNames.accounts, { batchSize: max, groupConcurrency: settings.backfillsAtOnce, includeMetadata: true, db })
            )
          })
        ).pipe(transactionEndFailures, Effect.catchTag("SqlError", (cause) => new QueueError({ operation: "claim", cause })))
        const now = yield* Clock.currentTimeMillis
        const claimed: Array<ClaimedJob> = []
        for (const j of jobs) {
          const decoded = yield* Effect.either(decodeAccountJob(j.data))
          if (decoded._tag === "Left") {
            // not ours to run (written by hand, or by another version): failed at once, visible in the dead letters
            yield* call("fail an unreadable job", () => boss.fail(QueueNames.accounts, attempt(j), { error: `unreadable job: ${decoded.left.message}` }))
            continue
          }
          const failedOver = j.retryCount > 0 && JSON.stringify(j.output ?? {}).includes(heartbeatTimeout)
          claimed.push({ id: j.id, retryCount: j.retryCount, job: decoded.right, claimedAtMs: now, failedOver })
        }
        return claimed
      })

    const heartbeat: JobQueueShape["heartbeat"] = (jobs) =>
      jobs.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
            call("heartbeat", () => boss.touch(QueueNames.accounts, jobs.map(attempt))),
            (r) => new Set<string>((r as { settled?: ReadonlyArray<string> }).settled ?? jobs.map((j) => j.id))
          )

    const complete: JobQueueShape["complete"] = (job, next, startAfter) =>
      next === undefined
        ? Effect.asVoid(call("complete", () => boss.complete(QueueNames.accounts, attempt(job))))
        : sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT ${limitPause}`
              yield* enqueue(next, startAfter ? { startAfter } : undefined)
              const db = yield* ourDatabase
              yield* call("complete", () => boss.complete(QueueNames.accounts, attempt(job), undefined, { db }))
            })
          ).pipe(transactionEndFailures)

    const fail: JobQueueShape["fail"] = (job, reason) => Effect.asVoid(call("fail", () => boss.fail(QueueNames.accounts, attempt(job), { error: reason })))

    // the tick queue is `stately`: one tick waits at a time, a second one sent meanwhile is dropped
    const tick = Effect.asVoid(call("tick", () => boss.send(QueueNames.tick, {})))
    const claimTick = Effect.map(
      call("claim tick", () => boss.fetch(QueueNames.tick, { batchSize: 1 })),
      (jobs) => Option.map(Option.fromNullable(jobs[0]), attempt)
    )
    const completeTick: JobQueueShape["completeTick"] = (t) => Effect.asVoid(call("complete tick", () => boss.complete(QueueNames.tick, attempt(t))))

    return JobQueue.of({ schema, enqueue, enqueueMany, claim, heartbeat, complete, fail, tick, claimTick, completeTick })
  })

export const JobQueueLive = (options: JobQueueOptions) => Layer.scoped(JobQueue, makeJobQueue(options))

/** For readers of pg-boss's tables (status): its schema as this configuration names it. */
export const queueSchemaOf = (settings: JobSettingsShape, databaseSchema: string) => Option.getOrElse(settings.schema, () => `${databaseSchema}_queue`)

/** WorkNotices over the queue: a new connection's backfill at once, an events job when the account's changes are due. */
export const workNoticesOf = (queue: JobQueueShape) => {
  const failed = (work: string) => (e: QueueError) => new WorkNoticeFailed({ work, reason: e.message })
  return WorkNotices.of({
    connected: (accountId) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const at = new Date(now).toISOString()
        return queue.enqueue({ kind: "backfill", accountId, dueAt: at, requestedAt: at, restart: false })
      }).pipe(Effect.mapError(failed(`the backfill of account ${accountId}`))),
    changed: (accountId, dueAt) =>
      queue
        .enqueue({ kind: "events", accountId, dueAt: dueAt.toISOString() }, { startAfter: dueAt })
        .pipe(Effect.mapError(failed(`the change events of account ${accountId}`)))
  })
}

/** The queue as serve and `connect` use it (no supervisor, no cron: the workers run those), and WorkNotices over it. */
export const enqueuingLayer = Layer.unwrapEffect(
  Effect.map(JobSettings, (settings) =>
    settings.workers
      ? Layer.effect(WorkNotices, Effect.map(JobQueue, workNoticesOf)).pipe(Layer.provideMerge(JobQueueLive({ supervise: false, instanceName: "serve" })))
      : Layer.empty
  )
).pipe(Layer.provide(JobSettings.layer))

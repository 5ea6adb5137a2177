import type { SqlError } from "@effect/sql"
import { Cause, Clock, Context, Duration, Effect, FiberMap, Layer, Metric, Option, Ref, Schedule } from "effect"
import * as Metrics from "../observability/metrics.js"
import { restartsInARow } from "../changes/restarts.js"
import { transactionEndFailures } from "../db/transactionEnd.js"
import { PagingStop, pagingStop } from "../sync/paging/pagingStop.js"
import { AccountWork, type WorkOutcome } from "./AccountWork.js"
import { type AccountJob, followUpOf } from "./JobKinds.js"
import { type ClaimedJob, JobQueue, type QueueError } from "./JobQueue.js"
import { JobSettings } from "./JobSettings.js"
import { Scheduler } from "./Scheduler.js"
import { makeWorkPermits } from "./WorkPermits.js"

export interface WorkerOptions {
  /**
   * Jobs (accounts) doing CPU work at once in this process: fetching, reading and landing a page. A job waiting for
   * its account's bucket holds none of these (see WorkPermits).
   */
  readonly concurrency: number
  /** Jobs (accounts) held at once, waiting or working (default: QUEUE_ACCOUNTS_IN_FLIGHT), at least `concurrency`. */
  readonly accountsInFlight?: number
  /** This process in logs and metrics (host:pid). */
  readonly name: string
}

/** The process side of the queue: claims jobs, works each for at most a slice, settles it; runs the schedule's ticks. */
export class Worker extends Context.Tag("account-sync/Worker")<Worker, { readonly run: (options: WorkerOptions) => Effect.Effect<never, QueueError | SqlError.SqlError> }>() {}

/** running; settled by this worker; lost: the heartbeat found it taken from this worker (its work stops, nothing is settled). */
type JobState = "running" | "settled" | "lost"

interface Held {
  readonly claimed: ClaimedJob
  readonly state: Ref.Ref<JobState>
}

const kindOf = (job: AccountJob) => job.kind

export const WorkerLive = Layer.effect(
  Worker,
  Effect.gen(function* () {
    const queue = yield* JobQueue
    const work = yield* AccountWork
    const scheduler = yield* Scheduler
    const settings = yield* JobSettings

    const run = (options: WorkerOptions) =>
      Effect.gen(function* () {
        const held = yield* Ref.make(new Map<string, Held>())
        const permits = makeWorkPermits(options.concurrency, options.name)
        const inFlight = Math.max(options.concurrency, options.accountsInFlight ?? settings.accountsInFlight)
        const tagged = <T, I, O>(metric: Metric.Metric<T, I, O>, job: AccountJob) => Metric.tagged(metric, "kind", kindOf(job))
        const finished = (job: AccountJob, outcome: string) =>
          Metric.increment(Metric.tagged(Metric.tagged(tagged(Metrics.jobsFinished, job), "outcome", outcome), "worker", options.name))

        // every third of the heartbeat's timeout: the jobs in hand stay claimed; one the database no longer gives this worker is stopped
        const beat = Effect.gen(function* () {
          const jobs = [...(yield* Ref.get(held)).values()]
          const still = yield* queue.heartbeat(jobs.map((h) => h.claimed))
          for (const h of jobs) {
            if (still.has(h.claimed.id)) continue
            if ((yield* Ref.getAndUpdate(h.state, (s) => (s === "running" ? "lost" : s))) !== "running") continue
            yield* Effect.logWarning(`job ${h.claimed.id} of account ${h.claimed.job.accountId} is no longer this worker's (failed over): stopping it`)
            // not awaited here: the page in flight lands first, and the other jobs' heartbeats must not wait for it
            yield* Effect.forkDaemon(FiberMap.remove(running, h.claimed.id))
          }
        }).pipe(
          transactionEndFailures,
          Effect.catchAll((e) => Effect.logWarning(`heartbeat: ${e.message}`))
        )

        /**
         * The job's work for a slice: at the slice's end (once it has landed a batch) its passes ask for no page more,
         * land what they fetched and stop there (interrupted, resumed by the follow-up job), so no page paid for is
         * thrown away and every slice advances, however slow the machine or the service. A work still running
         * `sliceGrace` later is interrupted where it is. None: the slice ended first.
         */
        const sliced = (run: Effect.Effect<WorkOutcome, SqlError.SqlError>): Effect.Effect<Option.Option<WorkOutcome>> =>
          Effect.suspend(() => {
            const stop = new PagingStop()
            return Effect.scoped(
              Effect.zipRight(
                Effect.forkScoped(Effect.zipRight(Effect.sleep(settings.slice), stop.request)),
                run.pipe(
                  Effect.locally(pagingStop, stop),
                  Effect.timeoutOption(Duration.sum(settings.slice, sliceGrace)),
                  Effect.catchAllCause((cause) =>
                    Effect.map(stop.wasRequested, (stopped) =>
                      stopped && Cause.isInterruptedOnly(cause)
                        ? Option.none<WorkOutcome>()
                        : Option.some<WorkOutcome>({ _tag: "Failed", reason: Cause.pretty(cause).split("\n")[0] ?? "failed" })
                    )
                  )
                )
              )
            )
          })

        // one job: its work for a slice (sliced), then settled; interrupted (SIGTERM) it is handed back at once
        const runJob = (claimed: ClaimedJob, state: Ref.Ref<JobState>) => {
          const { job } = claimed
          const settle = (outcome: Option.Option<WorkOutcome>, startedAt: number) =>
            Effect.gen(function* () {
              if ((yield* Ref.getAndUpdate(state, (s) => (s === "running" ? "settled" : s))) !== "running") return yield* finished(job, "lost")
              const now = yield* Clock.currentTimeMillis
              yield* Metric.update(tagged(Metrics.jobDurationSeconds, job), (now - startedAt) / 1000)
              if (Option.isNone(outcome)) {
                yield* queue.complete(claimed, followUpOf(job, now))
                yield* Effect.logInfo(`slice of ${Duration.format(settings.slice)} used: a follow-up job carries on`)
                return yield* finished(job, "sliced")
              }
              const o = outcome.value
              switch (o._tag) {
                case "Done":
                  yield* queue.complete(claimed)
                  yield* Effect.logInfo(`done: ${o.summary}`)
                  return yield* finished(job, "done")
                case "Later":
                  yield* queue.complete(claimed, followUpOf(job, now), new Date(now + Duration.toMillis(o.after)))
                  yield* Effect.logInfo(`${o.why}: again in ${Duration.format(o.after)}`)
                  return yield* finished(job, "later")
                case "Failed":
                  yield* queue.fail(claimed, o.reason)
                  yield* Effect.logWarning(`failed (retried with backoff, then kept as a dead letter): ${o.reason}`)
                  return yield* finished(job, "failed")
              }
            })
          const handBack = Effect.gen(function* () {
            const was = yield* Ref.getAndUpdate(state, (s) => (s === "running" ? "settled" : s))
            if (was === "settled") return
            if (was === "lost") return yield* finished(job, "lost")
            const now = yield* Clock.currentTimeMillis
            yield* queue.complete(claimed, followUpOf(job, now)).pipe(
              Effect.catchAll((e) => Effect.logWarning(`could not hand the account back (its heartbeat lapses and another worker takes it): ${e.message}`))
            )
            yield* finished(job, "handed-back")
            yield* Effect.logInfo("stopping: the account is handed-back to the queue (a follow-up job carries on)")
          })
          return Effect.gen(function* () {
            const startedAt = yield* Clock.currentTimeMillis
            yield* Metric.update(tagged(Metrics.jobDueToStartSeconds, job), Math.max(0, (startedAt - Date.parse(job.dueAt)) / 1000))
            if (claimed.retryCount > 0) yield* Metric.increment(tagged(Metrics.jobRetries, job))
            if (claimed.failedOver) yield* Metric.increment(tagged(Metrics.jobFailovers, job))
            const outcome = yield* sliced(permits.holding(work.run(job)))
            // settled whatever happens next: a SIGTERM now must not leave the job claimed until its heartbeat lapses
            yield* Effect.uninterruptible(settle(outcome, startedAt))
          }).pipe(
            Effect.onInterrupt(() => handBack),
            Effect.catchAll((e) => Effect.logWarning(`settling the job failed (pg-boss retries it when its heartbeat lapses): ${e.message}`)),
            Effect.ensuring(Ref.update(held, (m) => (m.delete(claimed.id), m))),
            Effect.annotateLogs({ accountId: job.accountId, job: job.kind, jobId: claimed.id }),
            Effect.withSpan("jobs.run", { attributes: { accountId: job.accountId, kind: job.kind } })
          )
        }

        // the FiberMap is made after the heartbeat's fiber: on shutdown the jobs are interrupted (handed back) first
        const running = yield* FiberMap.make<string>()
        yield* Effect.forkScoped(Effect.repeat(beat, { schedule: beatEvery(settings.heartbeatSeconds) }))

        // the schedule's ticks (pg-boss's cron, one per occurrence across all workers) are taken like any job
        const ticks = Effect.gen(function* () {
          const tick = yield* queue.claimTick
          if (Option.isNone(tick)) return
          yield* scheduler.enqueueDue
          yield* queue.completeTick(tick.value)
        }).pipe(
          transactionEndFailures,
          Effect.catchAll((e) => Effect.logWarning(`schedule tick: ${e.message}`))
        )
        yield* Effect.forkScoped(Effect.repeat(ticks, { schedule: spaced(settings.pollInterval) }))
        // a worker starting makes one tick of its own, so a fresh deployment does not wait for the next cron line
        yield* queue.tick

        yield* Effect.logInfo(`worker ${options.name} taking jobs: ${inFlight} accounts in flight, ${options.concurrency} working at once`)
        for (;;) {
          // more accounts only while a permit is idle: a worker whose permits are all busy leaves the queue's jobs to
          // the other workers; one whose accounts wait for their buckets takes more, up to the accounts in flight
          const free = Math.min(inFlight - (yield* FiberMap.size(running)), permits.idle())
          if (free <= 0) {
            yield* Effect.sleep(Duration.millis(50))
            continue
          }
          const claimed = yield* queue.claim(free)
          for (const c of claimed) {
            const state = yield* Ref.make<JobState>("running")
            yield* Ref.update(held, (m) => m.set(c.id, { claimed: c, state }))
            yield* FiberMap.run(running, c.id, runJob(c, state))
          }
          // the jobs just claimed take their permits before the next count
          yield* Effect.yieldNow()
          if (claimed.length < free) yield* Effect.sleep(settings.pollInterval)
        }
      }).pipe(
        Effect.scoped,
        transactionEndFailures,
        // the queue unreachable (the database away): the loop starts again after a jittered backoff, a bounded number of times
        Effect.tapError((e) => Effect.logWarning(`worker loop: ${e.message}; starting again`)),
        Effect.retry(restartsInARow(20))
      ) as Effect.Effect<never, QueueError | SqlError.SqlError>

    return Worker.of({ run })
  })
)

const spaced = (d: Duration.Duration) => Schedule.spaced(d)
/** How long past its slice a job's work may take to land the pages it fetched before it is interrupted where it is. */
const sliceGrace = Duration.minutes(2)
/**
 * The heartbeat's rhythm: every third of the timeout, on a fixed rate (a slow beat does not push the next one back).
 * Every half, after the previous beat had ended, left a loaded machine (load ~12, Postgres answering in seconds) too
 * little room: a beat late by 5 s lost a live worker its jobs to pg-boss's failover.
 */
const beatEvery = (seconds: number) => Schedule.fixed(Duration.millis((seconds * 1000) / 3))


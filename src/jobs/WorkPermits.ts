import { Clock, Deferred, Effect, Exit, Metric } from "effect"
import { idleWaiting } from "../api/idleWait.js"
import * as Metrics from "../observability/metrics.js"

/** Who holds a permit: set when the permit is granted, in the same step, so an interrupt never loses one. */
interface Holder {
  held: boolean
}

interface Waiter {
  readonly holder: Holder
  readonly done: Deferred.Deferred<void>
}

/**
 * `count` permits, first come first served: a release hands its permit to one waiter (Effect 3's Semaphore wakes
 * every waiter at each release, and a worker may have a thousand accounts waiting).
 */
const makePool = (count: number, busy: (seconds: number) => void) => {
  let free = count
  const waiting: Array<Waiter> = []
  // since when every permit is held (the worker's CPU work is what holds its accounts back), or undefined
  let fullSince: number | undefined
  const taken = () => {
    if (--free === 0) fullSince = performance.now()
  }
  const give = (holder: Holder) => {
    if (!holder.held) return
    holder.held = false
    const next = waiting.shift()
    if (next !== undefined) {
      next.holder.held = true
      return Deferred.unsafeDone(next.done, Exit.void)
    }
    if (free++ === 0 && fullSince !== undefined) busy((performance.now() - fullSince) / 1000)
  }
  const take = (holder: Holder): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (holder.held) return Effect.void
      if (free > 0) {
        taken()
        holder.held = true
        return Effect.void
      }
      return Effect.flatMap(Deferred.make<void>(), (done) => {
        const waiter: Waiter = { holder, done }
        waiting.push(waiter)
        // interrupted in line it leaves the line; granted meanwhile, the holder has it and gives it back when it ends
        return Deferred.await(done).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              const at = waiting.indexOf(waiter)
              if (at >= 0) waiting.splice(at, 1)
            })
          )
        )
      })
    })
  return { take, give, waiting: () => waiting.length, idle: () => (waiting.length > 0 ? 0 : free) }
}

export interface WorkPermitsShape {
  /**
   * Runs one job's work holding a permit, except while its fibers wait for the account's bucket (`idle`): the permit
   * is handed back for the wait and taken again after it, so a job waiting for its bucket holds no slot.
   */
  readonly holding: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Jobs waiting for a permit now. */
  readonly waiting: () => number
  /** Permits free with no job in line for one: room for more work. */
  readonly idle: () => number
}

/** A worker's permits of CPU work (its concurrency): the accounts it has in flight take turns on them. */
export const makeWorkPermits = (count: number, worker: string): WorkPermitsShape => {
  const permitsFull = Metric.tagged(Metrics.permitsFullSeconds, "worker", worker)
  const pool = makePool(count, (seconds) => permitsFull.unsafeUpdate(seconds, []))
  const permitWait = Metric.tagged(Metrics.permitWaitSeconds, "worker", worker)
  const takeTimed = (holder: Holder) =>
    Effect.gen(function* () {
      if (holder.held) return
      const asked = yield* Clock.currentTimeMillis
      yield* pool.take(holder)
      const waited = (yield* Clock.currentTimeMillis) - asked
      if (waited > 0) yield* Metric.incrementBy(permitWait, waited / 1000)
    })

  const holding = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const holder: Holder = { held: false }
      // the job's fibers waiting for its bucket (a page fetched ahead is a second fiber): the permit is handed back
      // while one waits and taken again when none does
      let idleFibers = 0
      const around = (wait: Effect.Effect<void>) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.sync(() => {
            if (idleFibers++ === 0) pool.give(holder)
          }).pipe(
            Effect.zipRight(Effect.exit(restore(wait))),
            Effect.flatMap((exit) => Effect.suspend(() => (--idleFibers === 0 ? Effect.zipRight(restore(takeTimed(holder)), exit) : exit)))
          )
        )
      return Effect.uninterruptibleMask((restore) =>
        restore(takeTimed(holder)).pipe(
          Effect.zipRight(restore(Effect.locally(work, idleWaiting, around))),
          Effect.ensuring(Effect.sync(() => pool.give(holder)))
        )
      )
    })

  return { holding, waiting: pool.waiting, idle: pool.idle }
}

import { Clock, type Duration, Effect } from "effect"

/**
 * The live clock moved `aheadMs` into the future: for rules judged against "now" (a stream gone stale) without
 * waiting, while everything else (the emulator, the database's now()) keeps real time.
 */
export const clockAhead = (aheadMs: number): Clock.Clock => {
  const live = Clock.make()
  const nanos = BigInt(Math.round(aheadMs)) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + aheadMs,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + aheadMs),
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + nanos,
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + nanos),
    sleep: (duration: Duration.Duration) => live.sleep(duration)
  }
}

/** Runs `effect` as if it were `aheadMs` later. */
export const later =
  (aheadMs: number) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withClock(effect, clockAhead(aheadMs))

import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Fiber, TestClock } from "effect"
import { timeoutWithPauseGrace } from "../../../src/auth/timeoutWithPauseGrace.js"

const timedOut = () => "timed out" as const

/**
 * The TestClock, read `pausedMs` later than it says: the TestClock runs every timer at its own time, so a process
 * stopped past a deadline (its timer firing late) is the clock jumping ahead while the timer sleeps.
 */
const withPause = <A, E, R>(effect: (pause: (ms: number) => void, adjust: (by: Duration.DurationInput) => Effect.Effect<void>) => Effect.Effect<A, E, R>) =>
  TestClock.testClockWith((test) => {
    let pausedMs = 0
    const paused: Clock.Clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: () => test.unsafeCurrentTimeMillis() + pausedMs,
      currentTimeMillis: Effect.map(test.currentTimeMillis, (t) => t + pausedMs),
      unsafeCurrentTimeNanos: () => test.unsafeCurrentTimeNanos() + BigInt(pausedMs) * 1_000_000n,
      currentTimeNanos: Effect.map(test.currentTimeNanos, (t) => t + BigInt(pausedMs) * 1_000_000n),
      sleep: (duration) => test.sleep(duration)
    }
    return Effect.withClock(
      effect((ms) => void (pausedMs += ms), (by) => test.adjust(by)),
      paused
    )
  })

/**
 * A 10 s deadline whose process was stopped 2 s past it: the timer fires late; nothing has answered yet, and the
 * attempt is still running (in its grace).
 */
const stoppedPastTheDeadline = withPause((pause, adjust) =>
  Effect.gen(function* () {
    const answer = yield* Deferred.make<string>()
    const fiber = yield* Effect.fork(timeoutWithPauseGrace(Deferred.await(answer), Duration.seconds(10), timedOut))
    yield* adjust(Duration.seconds(9))
    pause(2_000)
    yield* adjust(Duration.seconds(1))
    expect(fiber.unsafePoll()).toBeNull()
    return { answer, fiber, adjust }
  })
)

describe("timeoutWithPauseGrace", () => {
  it.effect("a deadline that comes due on time fails the effect at once", () =>
    Effect.gen(function* () {
      const never = yield* Deferred.make<string>()
      const fiber = yield* Effect.fork(timeoutWithPauseGrace(Deferred.await(never), Duration.seconds(10), timedOut))
      yield* TestClock.adjust(Duration.millis(9_999))
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Fiber.await(fiber)).toEqual(Exit.fail("timed out"))
    })
  )

  it.effect("a deadline that comes due late (the process was stopped) lets the answer that arrived meanwhile win", () =>
    Effect.gen(function* () {
      const { answer, fiber } = yield* stoppedPastTheDeadline
      yield* Deferred.succeed(answer, "tokens")
      expect(yield* Fiber.join(fiber)).toBe("tokens")
    })
  )

  it.effect("late, and still no answer after the grace: it fails", () =>
    Effect.gen(function* () {
      const { fiber, adjust } = yield* stoppedPastTheDeadline
      yield* adjust(Duration.seconds(1))
      expect(yield* Fiber.await(fiber)).toEqual(Exit.fail("timed out"))
    })
  )
})

import { Chunk, Effect, Fiber, TestClock, TestContext, TestServices } from "effect"
import { TestEmulator } from "./emulator.js"

/**
 * Runs `work` on TestClock with a driver that moves its clock and the emulator's together to the end of each wait no
 * longer than `longestWaitMs` (a wait for the bucket; the request timeouts, longer, are never taken for one). The
 * emulator's clock moves with real time too, by the milliseconds between an answer and the next query: never enough to
 * hide a throttle. Gives the work's result and the milliseconds the clocks were moved.
 */
export const onBucketClock = <A, E, R>(longestWaitMs: number, work: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    yield* TestClock.setTime((yield* admin.clock()).nowMs)
    let movedMs = 0
    const driver = yield* Effect.forever(
      Effect.gen(function* () {
        yield* TestServices.provideLive(Effect.sleep("2 millis"))
        const now = yield* TestClock.currentTimeMillis
        const waits = Chunk.toReadonlyArray(yield* TestClock.sleeps()).filter((at) => at > now && at - now <= longestWaitMs)
        if (waits.length === 0) return
        const step = Math.min(...waits) - now
        yield* admin.advanceClock({ seconds: step / 1000 })
        yield* TestClock.adjust(step)
        movedMs += step
      })
    ).pipe(Effect.fork)
    const result = yield* work
    yield* Fiber.interrupt(driver)
    return { result, movedMs }
  }).pipe(Effect.provide(TestContext.TestContext))

import { expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { makeAddressBuckets } from "../../../src/auth/AnonymousLimits.js"

it.effect("a token bucket per address: 20 at once, then one every 3 seconds; other addresses are not affected", () =>
  Effect.gen(function* () {
    const take = makeAddressBuckets(20)
    for (let i = 0; i < 20; i++) yield* take("198.51.100.1")
    const refused = yield* Effect.flip(take("198.51.100.1"))
    expect(refused._tag).toBe("RateLimited")
    expect(Duration.toMillis(refused.retryAfter)).toBe(3_000)
    yield* take("198.51.100.2")
    yield* TestClock.adjust(Duration.millis(2_999))
    expect((yield* Effect.flip(take("198.51.100.1")))._tag).toBe("RateLimited")
    yield* TestClock.adjust(Duration.millis(1))
    yield* take("198.51.100.1")
    expect((yield* Effect.flip(take("198.51.100.1")))._tag).toBe("RateLimited")
    // after a minute the bucket is full again, not fuller
    yield* TestClock.adjust(Duration.minutes(5))
    for (let i = 0; i < 20; i++) yield* take("198.51.100.1")
    expect((yield* Effect.flip(take("198.51.100.1")))._tag).toBe("RateLimited")
  })
)

it.effect("past 10,000 addresses the oldest are forgotten (memory stays bounded) and every address still gets its own budget", () =>
  Effect.gen(function* () {
    const take = makeAddressBuckets(2)
    for (let i = 0; i < 12_000; i++) yield* take(`spray-${i}`)
    // the latest sprayed address is still remembered (limited after its second request) ...
    yield* take("spray-11999")
    expect((yield* Effect.flip(take("spray-11999")))._tag).toBe("RateLimited")
    yield* take("fresh")
    yield* take("fresh")
    expect((yield* Effect.flip(take("fresh")))._tag).toBe("RateLimited")
  })
)

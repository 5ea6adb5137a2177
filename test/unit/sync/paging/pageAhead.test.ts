import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { atOffset } from "../../../../src/sync/paging/place.js"
import { makePageAhead } from "../../../../src/sync/paging/pageAhead.js"

const asked = (offset: number, first = 100) => ({ place: atOffset(offset), first, inner: new Map() })

/** A fetch that waits for `release`, and says whether it was interrupted. */
const fetch = Effect.gen(function* () {
  const release = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<boolean>()
  const effect = Deferred.await(release).pipe(
    Effect.as("page"),
    Effect.onInterrupt(() => Deferred.succeed(interrupted, true))
  )
  return { release, interrupted, effect }
})

describe("the page fetched ahead", () => {
  it.effect("is taken by an ask at its place with its sizes, and the slot is empty after", () =>
    Effect.gen(function* () {
      const ahead = makePageAhead<string, never>()
      const f = yield* fetch
      yield* ahead.start(asked(99), f.effect)
      const taken = yield* ahead.take(asked(99))
      expect(taken).toBeDefined()
      yield* Deferred.succeed(f.release, undefined)
      expect(yield* Fiber.join(taken!)).toBe("page")
      expect(yield* ahead.take(asked(99))).toBeUndefined()
    })
  )

  it.effect.each([
    ["another place", asked(98)],
    ["another size", asked(99, 50)]
  ] as const)("is interrupted when the next ask is at %s", ([, other]) =>
    Effect.gen(function* () {
      const ahead = makePageAhead<string, never>()
      const f = yield* fetch
      yield* ahead.start(asked(99), f.effect)
      yield* Effect.yieldNow()
      expect(yield* ahead.take(other)).toBeUndefined()
      expect(yield* Deferred.await(f.interrupted)).toBe(true)
      expect(yield* ahead.take(asked(99))).toBeUndefined()
    })
  )

  it.effect("is interrupted when dropped (a page asked again, the list's end, the stream's end), and dropping twice is harmless", () =>
    Effect.gen(function* () {
      const ahead = makePageAhead<string, never>()
      const f = yield* fetch
      yield* ahead.start(asked(99), f.effect)
      yield* Effect.yieldNow()
      yield* ahead.drop
      expect(yield* Deferred.await(f.interrupted)).toBe(true)
      yield* ahead.drop
      expect(yield* ahead.take(asked(99))).toBeUndefined()
    })
  )

  it.effect("an empty slot gives nothing", () =>
    Effect.gen(function* () {
      const ahead = makePageAhead<string, never>()
      expect(yield* ahead.take(asked(0))).toBeUndefined()
      yield* ahead.drop
    })
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Ref, TestClock } from "effect"
import { CostBudget, CostBudgetLive } from "../../../src/api/CostBudget.js"
import { AccountQuery } from "../../../src/api/documents.js"
import type { QueryCost } from "../../../src/api/errors.js"
import { makeWorkPermits } from "../../../src/jobs/WorkPermits.js"

const emptyBucket = (restoreRate: number): QueryCost => ({
  requestedQueryCost: 1,
  actualQueryCost: 1,
  throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 0, restoreRate }
})

/** Lets every fiber that can run do so (the TestClock does not move). */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

const isDone = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) => Effect.map(Fiber.poll(fiber), Option.isSome)

describe("WorkPermits", () => {
  it.effect("a job waiting for its account's bucket holds no permit: with one permit, another account's job completes meanwhile", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const permits = makeWorkPermits(1, "test")
      // account a's bucket is empty, restoring 1 point a second: 500 points are 500 s away
      yield* budget.observe("a", AccountQuery, {}, emptyBucket(1))
      const a = yield* Effect.fork(permits.holding(budget.acquire("a", 500)))
      yield* settle
      const b = yield* Effect.fork(permits.holding(budget.acquire("b", 500)))
      yield* settle
      expect(yield* isDone(b)).toBe(true)
      expect(yield* isDone(a)).toBe(false)
      yield* TestClock.adjust("500 seconds")
      yield* Fiber.join(a)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("a job working (not waiting) holds its permit: the next job starts when it ends", () =>
    Effect.gen(function* () {
      const permits = makeWorkPermits(1, "test")
      const gate = yield* Deferred.make<void>()
      const a = yield* Effect.fork(permits.holding(Deferred.await(gate)))
      yield* settle
      const b = yield* Effect.fork(permits.holding(Effect.void))
      yield* settle
      expect(yield* isDone(b)).toBe(false)
      expect(permits.waiting()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(a)
      yield* Fiber.join(b)
    })
  )

  it.effect("a job whose wait is over takes a permit again before it goes on", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const permits = makeWorkPermits(1, "test")
      yield* budget.observe("a", AccountQuery, {}, emptyBucket(10))
      const after = yield* Ref.make(false)
      const a = yield* Effect.fork(permits.holding(Effect.zipRight(budget.acquire("a", 100), Ref.set(after, true))))
      yield* settle
      const gate = yield* Deferred.make<void>()
      const b = yield* Effect.fork(permits.holding(Deferred.await(gate)))
      yield* settle
      // a's 10 s are over while b holds the permit: a waits for it
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(yield* Ref.get(after)).toBe(false)
      expect(permits.waiting()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(b)
      yield* Fiber.join(a)
      expect(yield* Ref.get(after)).toBe(true)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("jobs interrupted in line, holding or waiting for their bucket leave every permit to the others", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const permits = makeWorkPermits(2, "test")
      yield* budget.observe("w", AccountQuery, {}, emptyBucket(1))
      const never = Effect.never
      const holdingA = yield* Effect.fork(permits.holding(never))
      const holdingB = yield* Effect.fork(permits.holding(never))
      const inLine = yield* Effect.fork(permits.holding(never))
      const waiting = yield* Effect.fork(permits.holding(budget.acquire("w", 500)))
      yield* settle
      expect(permits.waiting()).toBe(2)
      yield* Fiber.interrupt(inLine)
      yield* Fiber.interrupt(holdingA)
      yield* Fiber.interrupt(waiting)
      yield* Fiber.interrupt(holdingB)
      // both permits free again: two jobs work at once
      const started = yield* Ref.make(0)
      const gate = yield* Deferred.make<void>()
      const both = yield* Effect.fork(
        Effect.all([0, 1].map(() => permits.holding(Effect.zipRight(Ref.update(started, (n) => n + 1), Deferred.await(gate)))), { concurrency: "unbounded" })
      )
      yield* settle
      expect(yield* Ref.get(started)).toBe(2)
      expect(permits.waiting()).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(both)
    }).pipe(Effect.provide(CostBudgetLive))
  )
})

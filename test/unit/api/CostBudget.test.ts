import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option, TestClock } from "effect"
import { CostBudget, CostBudgetLive } from "../../../src/api/CostBudget.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { AccountQuery } from "../../../src/api/documents.js"
import { gql } from "graphql-tag"

/** A page of 28 fields a job and pageInfo: 1 + first x 31 points. */
const JobsPageQuery = gql`
  query JobsPage($first: Int!) {
    jobs(first: $first) {
      nodes {
        id jobNumber title jobStatus jobType billingType source instructions defaultVisitTitle jobberWebUri total invoicedTotal
        uninvoicedTotal completedAndUninvoicedVisitsCount completedAndUninvoicedVisitsTotal readyToClose allowReviewRequest
        visitGenerationInProgress visitReschedulingInProgress willClientBeAutomaticallyCharged startAt endAt completedAt
        bookingConfirmationSentAt nextDateToSendReviewSms pendingInvoiceStartsAt createdAt updatedAt
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`
import type { QueryCost } from "../../../src/api/errors.js"

const cost = (requested: number, actual: number, available: number, maximum = 1000, restoreRate = 200): QueryCost => ({
  requestedQueryCost: requested,
  actualQueryCost: actual,
  throttleStatus: { maximumAvailable: maximum, currentlyAvailable: available, restoreRate }
})

/** Runs `acquire` (or `room`) in a fiber and reports how long (on the TestClock) it took to be let through. */
const waitsFor = (accountId: string, points: number, how: "acquire" | "room" = "acquire") =>
  Effect.gen(function* () {
    const budget = yield* CostBudget
    const fiber = yield* Effect.fork(budget[how](accountId, points))
    let waited = 0
    yield* Effect.yieldNow()
    while (Option.isNone(yield* Fiber.poll(fiber))) {
      if (waited > 600_000) throw new Error("acquire never returned")
      // in steps of 10 ms, but straight to the step of the next wake-up on the clock: nothing runs between two
      const now = yield* Clock.currentTimeMillis
      const next = Math.min(...(yield* TestClock.sleeps()))
      const step = next > now && Number.isFinite(next) ? Math.ceil((next - now) / 10) * 10 : 10
      yield* TestClock.adjust(Duration.millis(step))
      waited += step
      yield* Effect.yieldNow()
    }
    return waited
  })

describe("CostBudget", () => {
  it.effect("lets queries through at once while it has not seen the account's bucket", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      expect(yield* waitsFor("a", 5000)).toBe(0)
      expect(yield* budget.pageSize("a", JobsPageQuery, (first) => ({ first }), 100)).toBe(100)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("waits until the mirrored bucket, restoring at restoreRate on the Clock, holds the estimate", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 100))
      // 100 available, 500 needed, 200/s: exactly 2 s
      expect(yield* waitsFor("a", 500)).toBe(2000)
      // the 500 were reserved: the next 200 need another second
      expect(yield* waitsFor("a", 200)).toBe(1000)
      const stats = yield* budget.stats("a")
      expect(stats.waitedMs).toBe(3000)
      expect(stats.pointsUsed).toBe(3)
      expect(stats.throttled).toBe(0)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("room waits until the bucket holds the points and reserves none: the acquire after it is let through at once", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 100))
      expect(yield* waitsFor("a", 500, "room")).toBe(2000)
      expect(yield* waitsFor("a", 500, "room")).toBe(0)
      expect(yield* waitsFor("a", 500)).toBe(0)
      // the 500 were reserved by the acquire: the next room for 200 waits a second
      expect(yield* waitsFor("a", 200, "room")).toBe(1000)
      expect((yield* budget.stats("a")).waitedMs).toBe(3000)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("queries waiting at once count their wait once: the time waited never exceeds the time that passed", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 0))
      // two pages asked at once (one fetched ahead), 200 points each at 200/s: the second waits 2 s, the first 1 s within it
      const first = yield* Effect.fork(budget.acquire("a", 200))
      const second = yield* Effect.fork(budget.acquire("a", 200))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect((yield* budget.stats("a")).waitedMs).toBe(2000)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("restores no further than the maximum, and accounts are independent", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 0))
      yield* budget.observe("b", AccountQuery, {}, cost(3, 3, 1000))
      yield* TestClock.adjust("60 seconds")
      expect(yield* waitsFor("a", 1000)).toBe(0)
      // a's bucket is empty again: 1000 more take 5 s at 200/s (not less, though a minute passed before)
      expect(yield* waitsFor("a", 1000)).toBe(5000)
      expect(yield* waitsFor("b", 1000)).toBe(0)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("after a THROTTLED answer, waits exactly deficit / restoreRate and counts it", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const variables = { first: 100 }
      const requested = estimateQueryCost(JobsPageQuery, variables)
      yield* budget.throttled("a", JobsPageQuery, variables, cost(requested, 0, 101, 10_000, 500))
      // deficit 3101 - 101 = 3000 points at 500/s = 6 s
      expect(yield* waitsFor("a", yield* budget.estimate("a", JobsPageQuery, variables))).toBe(6000)
      expect((yield* budget.stats("a")).throttled).toBe(1)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("sizes `first` to what a full bucket holds, corrected by the cost the service last requested", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const vars = (first: number) => ({ first })
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 1000))
      // 1 + 31 * first <= 1000
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100)).toBe(32)
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 20)).toBe(20)
      // the service asked twice our static estimate for this document: the estimate follows
      yield* budget.observe("a", JobsPageQuery, vars(10), cost(2 * estimateQueryCost(JobsPageQuery, vars(10)), 50, 1000))
      expect(yield* budget.estimate("a", JobsPageQuery, vars(10))).toBe(2 * 311)
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100)).toBe(16)
      expect((yield* budget.stats("a")).pointsUsed).toBe(53)
    }).pipe(Effect.provide(CostBudgetLive))
  )

  it.effect("fit now: sized to what the bucket holds now, restoring on the Clock, and never below a quarter of a full one", () =>
    Effect.gen(function* () {
      const budget = yield* CostBudget
      const vars = (first: number) => ({ first })
      // 1 + 31 * first points; a bucket of 1,000 restoring at 200 a second, left at 311 by the last answer
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 311))
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100, "now")).toBe(10)
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100)).toBe(32)
      yield* TestClock.adjust(Duration.seconds(1))
      // 511 points now
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100, "now")).toBe(16)
      // left at 0: a quarter of the bucket (250 points), not a page of one
      yield* budget.observe("a", AccountQuery, {}, cost(3, 3, 0))
      expect(yield* budget.pageSize("a", JobsPageQuery, vars, 100, "now")).toBe(8)
    }).pipe(Effect.provide(CostBudgetLive))
  )
})

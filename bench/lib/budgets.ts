import { Duration, Effect, Layer } from "effect"
import { CostBudget, type CostBudgetShape, makeCostBudget } from "../../src/api/CostBudget.js"

/** What the service charged, as the connector saw it: sums over the answered queries' `extensions.cost`. */
export class CostMeter {
  requested = 0
  actual = 0
  answered = 0
  throttled = 0
  /** Each answer as it arrived (performance.now()): its cost and the bucket the service reported after charging it. */
  readonly answers: Array<{ readonly atMs: number; readonly requested: number; readonly actual: number; readonly available: number; readonly maximum: number; readonly restoreRate: number }> = []
  reset(): void {
    this.requested = 0
    this.actual = 0
    this.answered = 0
    this.throttled = 0
    this.answers.length = 0
  }
}

const metered = (inner: CostBudgetShape, meter: CostMeter): CostBudgetShape => ({
  ...inner,
  observe: (accountId, document, variables, cost) =>
    Effect.zipRight(
      Effect.sync(() => {
        meter.requested += cost.requestedQueryCost
        meter.actual += cost.actualQueryCost
        meter.answered++
        const { currentlyAvailable: available, maximumAvailable: maximum, restoreRate } = cost.throttleStatus
        meter.answers.push({ atMs: performance.now(), requested: cost.requestedQueryCost, actual: cost.actualQueryCost, available, maximum, restoreRate })
      }),
      inner.observe(accountId, document, variables, cost)
    ),
  throttled: (accountId, document, variables, cost) =>
    Effect.zipRight(Effect.sync(() => void meter.throttled++), inner.throttled(accountId, document, variables, cost))
})

/** The connector's own CostBudget, unchanged, with a meter on its observations. */
export const meteredCostBudget = (meter: CostMeter) => Layer.effect(CostBudget, Effect.map(makeCostBudget, (b) => metered(b, meter)))

/**
 * The strategy most public integration guides recommend: always `first: 100` (or the stream's maximum), never wait
 * before a query; on THROTTLED sleep 1 s, then 2, 4, ... capped at 30 s; a success resets the backoff.
 * It plugs into the same ServiceClient: `throttled` arms the sleep, the retry's `acquire` takes it.
 */
export const makeReactiveBudget = (): CostBudgetShape => {
  const streak = new Map<string, number>()
  const pending = new Map<string, number>()
  const stats = new Map<string, { pointsUsed: number; waitedMs: number; throttled: number }>()
  const statsOf = (accountId: string) => {
    let s = stats.get(accountId)
    if (!s) stats.set(accountId, (s = { pointsUsed: 0, waitedMs: 0, throttled: 0 }))
    return s
  }
  return {
    estimate: () => Effect.succeed(0),
    room: () => Effect.void,
    pageSize: (_accountId, _document, _variablesFor, maxPageSize) => Effect.succeed(Math.min(100, maxPageSize)),
    acquire: (accountId) =>
      Effect.suspend(() => {
        const ms = pending.get(accountId) ?? 0
        if (ms === 0) return Effect.void
        pending.delete(accountId)
        statsOf(accountId).waitedMs += ms
        return Effect.sleep(Duration.millis(ms))
      }),
    observe: (accountId, _document, _variables, cost) =>
      Effect.sync(() => {
        streak.set(accountId, 0)
        statsOf(accountId).pointsUsed += cost.actualQueryCost
      }),
    throttled: (accountId) =>
      Effect.sync(() => {
        const n = (streak.get(accountId) ?? 0) + 1
        streak.set(accountId, n)
        pending.set(accountId, Math.min(1000 * 2 ** (n - 1), 30_000))
        statsOf(accountId).throttled++
      }),
    stats: (accountId) => Effect.sync(() => ({ ...statsOf(accountId) }))
  }
}

export const reactiveCostBudget = (meter: CostMeter) => Layer.sync(CostBudget, () => metered(makeReactiveBudget(), meter))

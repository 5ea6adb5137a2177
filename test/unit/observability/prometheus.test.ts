import { expect, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { eventLagSeconds, eventQueueDepth, eventsApplied, forAccount, rowsUpserted, runsFinished } from "../../../src/observability/metrics.js"
import { MetricsOfOtherThreads, ownMetrics, prometheusText } from "../../../src/observability/prometheus.js"

it.effect("counters render in Prometheus text format with their account label", () =>
  Effect.gen(function* () {
    yield* Metric.incrementBy(forAccount(rowsUpserted, "acc-\"1\""), 41)
    yield* Metric.increment(forAccount(rowsUpserted, "acc-\"1\""))
    yield* Metric.increment(Metric.tagged(forAccount(runsFinished, "acc-2"), "outcome", "succeeded"))
    const text = yield* prometheusText
    expect(text).toContain("# TYPE account_sync_rows_upserted_total counter")
    expect(text).toContain('account_sync_rows_upserted_total{account_id="acc-\\"1\\""} 42')
    expect(text).toMatch(/account_sync_runs_total\{(account_id="acc-2",outcome="succeeded"|outcome="succeeded",account_id="acc-2")\} 1/)
  })
)

it.effect("another thread's metrics add to this one's: counts and histograms sum, a gauge is the first thread's", () =>
  Effect.gen(function* () {
    const account = "acc-threads"
    yield* Metric.incrementBy(forAccount(eventsApplied, account), 3)
    yield* Metric.update(eventLagSeconds, 0.4)
    yield* Metric.set(forAccount(eventQueueDepth, account), 7)
    const own = yield* ownMetrics
    // the worker thread's figures, as it hands them over (its own registry: the same names, other values)
    const other = own.map((m) => ({ ...m, values: m.values.map((v) => ({ ...v, labels: { ...v.labels }, value: m.type === "gauge" ? 99 : v.value })) }))
    const text = yield* prometheusText.pipe(Effect.provideService(MetricsOfOtherThreads, { current: Effect.succeed(other) }))
    expect(text).toContain(`account_sync_events_applied_total{account_id="${account}"} 6`)
    expect(text).toContain(`account_sync_event_queue_depth{account_id="${account}"} 7`)
    const lagCount = Number(/^account_sync_event_lag_seconds_count(?:\{\})? (\d+)$/m.exec(text)?.[1])
    const ownLagCount = own.find((m) => m.name === "account_sync_event_lag_seconds")!.values.find((v) => v.metricName === "account_sync_event_lag_seconds_count")!.value
    expect(lagCount).toBe(2 * ownLagCount)
    expect(ownLagCount).toBeGreaterThan(0)
  })
)

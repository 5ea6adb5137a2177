import { expect, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { forAccount, rowsUpserted, runsFinished } from "../../../src/observability/metrics.js"
import { prometheusText } from "../../../src/observability/prometheus.js"

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

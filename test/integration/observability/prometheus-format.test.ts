import { expect, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { eventLagSeconds, eventQueueDepth, forAccount, rowsUpserted, runsFinished } from "../../../src/observability/metrics.js"
import { prometheusText } from "../../../src/observability/prometheus.js"
import { promtoolAvailable, promtoolCheck, promtoolSkipReason } from "../../support/promtool.js"

it.effect.skipIf(!promtoolAvailable)(
  `every kind of metric, with labels that need escaping, is text Prometheus' own parser accepts (promtool check metrics)${promtoolSkipReason}`,
  () =>
    Effect.gen(function* () {
      yield* Metric.incrementBy(forAccount(rowsUpserted, 'acc "1" \\ with\na newline'), 42)
      yield* Metric.increment(Metric.tagged(forAccount(runsFinished, "acc-2"), "outcome", "succeeded"))
      yield* Metric.update(forAccount(eventLagSeconds, "acc-2"), 0.7)
      yield* Metric.update(forAccount(eventLagSeconds, "acc-2"), 7_200)
      yield* Metric.set(forAccount(eventQueueDepth, "acc-2"), 3)
      const text = yield* prometheusText
      const check = yield* promtoolCheck(text)
      expect(check.code, `${check.output}\n${text}`).toBe(0)
      expect(check.output).toBe("")
      expect(text).toContain("# HELP account_sync_rows_upserted_total Rows written to the warehouse (inserted or changed)\n")
      expect(text).toContain('account_sync_rows_upserted_total{account_id="acc \\"1\\" \\\\ with\\na newline"} 42')
      expect(text).toContain('account_sync_event_lag_seconds_bucket{account_id="acc-2",le="1"} 1')
      expect(text).toContain('account_sync_event_lag_seconds_bucket{account_id="acc-2",le="+Inf"} 2')
      expect(text).toContain('account_sync_event_lag_seconds_count{account_id="acc-2"} 2')
      expect(text).toContain('account_sync_event_queue_depth{account_id="acc-2"} 3')
    })
)

import { Metric } from "effect"

/**
 * The connector's counters. Tagged per account where noted (accounts are few: cardinality stays small).
 * Served by `serve` at /metrics and written to METRICS_FILE by `sync`/`backfill`, in Prometheus text format.
 */
export const rowsUpserted = Metric.counter("account_sync_rows_upserted_total", {
  description: "Rows written to the warehouse (inserted or changed)",
  incremental: true
})
export const pagesCommitted = Metric.counter("account_sync_pages_total", {
  description: "Pages committed together with their checkpoint",
  incremental: true
})
export const queryCostPoints = Metric.counter("account_sync_query_cost_points_total", {
  description: "Query cost points charged by the service (actualQueryCost)",
  incremental: true
})
export const throttleWaitSeconds = Metric.counter("account_sync_throttle_wait_seconds_total", {
  description: "Seconds spent waiting for the cost bucket to refill",
  incremental: true
})
export const throttledAnswers = Metric.counter("account_sync_throttled_total", {
  description: "THROTTLED answers received from the service",
  incremental: true
})
export const tokenRefreshes = Metric.counter("account_sync_token_refreshes_total", {
  description: "Successful access-token refreshes",
  incremental: true
})
export const tokenRefreshFailures = Metric.counter("account_sync_token_refresh_failures_total", {
  description: "Refresh attempts that failed (refused, misconfigured or unavailable)",
  incremental: true
})
export const runsFinished = Metric.counter("account_sync_runs_total", {
  description: "Sync runs by outcome",
  incremental: true
})

/** Tags a metric update with the account (and, for runs, the outcome). */
export const forAccount = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>, accountId: string) =>
  Metric.tagged(metric, "account_id", accountId)

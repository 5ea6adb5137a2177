import { Metric, MetricBoundaries } from "effect"

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
export const sweepsSkipped = Metric.counter("account_sync_sweeps_skipped_total", {
  description: "Full passes that kept rows live without proving them there or gone (status says why)",
  incremental: true
})
export const lineItemsKept = Metric.counter("account_sync_line_items_kept_total", {
  description: "Line items a landed parent did not return while the service counted more of them: not proven gone, kept live",
  incremental: true
})
export const runsFinished = Metric.counter("account_sync_runs_total", {
  description: "Sync runs by outcome",
  incremental: true
})

export const eventsReceived = Metric.counter("account_sync_events_received_total", {
  description: "Webhook deliveries recorded (signed and well formed), by topic",
  incremental: true
})
export const eventDuplicates = Metric.counter("account_sync_event_duplicates_total", {
  description: "Webhook deliveries already recorded (the service sends at least once)",
  incremental: true
})
export const eventsApplied = Metric.counter("account_sync_events_applied_total", {
  description: "Change events applied to the warehouse (records read again and landed, or marked deleted)",
  incremental: true
})
export const eventsFailed = Metric.counter("account_sync_events_failed_total", {
  description: "Change event attempts that failed (retried with backoff, then left failed)",
  incremental: true
})
export const eventLagSeconds = Metric.histogram(
  "account_sync_event_lag_seconds",
  MetricBoundaries.fromIterable([0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600]),
  "Seconds from a change at the service (the event's occurredAt) to the warehouse"
)
export const eventQueueDepth = Metric.gauge("account_sync_event_queue_depth", {
  description: "Change events waiting to be applied, per account"
})

export const apiVersionWarnings = Metric.counter("account_sync_api_version_warnings_total", {
  description: "Answers of the service that carried a deprecation warning about their API version (extensions.versioning.warning), by version",
  incremental: true
})

/**
 * The account's metrics, made once per metric and account: a tagged metric finds its hook in the global registry by
 * the identity of its tags, so one made anew for every update hashes and compares a new key each time (per page).
 */
const tagged = new WeakMap<object, Map<string, unknown>>()

/** Tags a metric update with the account (and, for runs, the outcome). */
export const forAccount = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>, accountId: string): Metric.Metric<Type, In, Out> => {
  let byAccount = tagged.get(metric)
  if (byAccount === undefined) tagged.set(metric, (byAccount = new Map()))
  let found = byAccount.get(accountId) as Metric.Metric<Type, In, Out> | undefined
  if (found === undefined) byAccount.set(accountId, (found = Metric.tagged(metric, "account_id", accountId)))
  return found
}

// the job queue (workers): tagged by job kind; `worker` tags which process did the work
export const queueJobs = Metric.gauge("account_sync_queue_jobs", {
  description: "Jobs of the account queue by kind and state (created, retry, active, failed), as the database holds them"
})
export const jobDueToStartSeconds = Metric.histogram(
  "account_sync_job_due_to_start_seconds",
  MetricBoundaries.fromIterable([0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600]),
  "Seconds from when a job's work became due to when a worker started it, by kind"
)
export const jobDurationSeconds = Metric.histogram(
  "account_sync_job_duration_seconds",
  MetricBoundaries.fromIterable([0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600]),
  "Seconds a job's work ran on its worker, by kind"
)
export const jobsFinished = Metric.counter("account_sync_jobs_total", {
  description: "Jobs a worker finished, by kind and outcome (done, sliced: a follow-up carries on, later, failed, lost, handed-back)",
  incremental: true
})
export const jobRetries = Metric.counter("account_sync_job_retries_total", {
  description: "Jobs claimed again after a failed attempt, by kind",
  incremental: true
})
export const jobFailovers = Metric.counter("account_sync_job_failovers_total", {
  description: "Jobs claimed again after the worker that held them stopped beating (crashed or cut off), by kind",
  incremental: true
})

export const permitWaitSeconds = Metric.counter("account_sync_worker_permit_wait_seconds_total", {
  description: "Time the accounts a worker has in flight waited for one of its permits of CPU work (its concurrency), by worker",
  incremental: true
})

export const permitsFullSeconds = Metric.counter("account_sync_worker_permits_full_seconds_total", {
  description: "Time during which every one of a worker's permits of CPU work was held (its CPU work, not its accounts' buckets, set the pace), by worker",
  incremental: true
})

import { Effect, Layer, Option } from "effect"
import { Health, type HealthSnapshot } from "./Health.js"
import { MetricsOfState, type PromMetric } from "../observability/prometheus.js"

/**
 * The installation's state as gauges, computed from the database when they are read (a scrape of serve's /metrics,
 * or the METRICS_FILE a `sync` writes as it ends), so both say the same, a one-shot process included.
 */

const gauge = (name: string, help: string, values: PromMetric["values"]): PromMetric => ({ name, help, type: "gauge", aggregator: "first", values })

const seconds = (ms: number) => Math.round(ms / 1000)

export const healthMetrics = (s: HealthSnapshot): Array<PromMetric> => {
  const state = Option.getOrUndefined(s.apiVersion.state)
  return [
    gauge(
      "account_sync_stream_data_age_seconds",
      "Seconds since the stream's data of the account was last known current (its last successful pass began, or its change events were applied)",
      s.streams.map((f) => ({ value: seconds(f.ageMs), labels: { account_id: f.accountId, stream: f.stream } }))
    ),
    gauge(
      "account_sync_stream_stale_after_seconds",
      "Age past which the stream's data counts as stale: its cadence (full-pass cadence, or the sync schedule) plus SYNC_STALE_MARGIN",
      s.streams.map((f) => ({ value: seconds(f.staleAfterMs), labels: { account_id: f.accountId, stream: f.stream } }))
    ),
    gauge(
      "account_sync_connection_status",
      "1 for each connection's current status (active, revoked, disconnected)",
      s.accounts.map((a) => ({ value: 1, labels: { account_id: a.connection.accountId, status: a.connection.status } }))
    ),
    gauge(
      "account_sync_account_failed_runs_in_a_row",
      "Runs of the account that failed in a row (0 after a run that synced)",
      s.accounts.map((a) => ({ value: a.failuresInARow, labels: { account_id: a.connection.accountId } }))
    ),
    gauge(
      "account_sync_event_oldest_waiting_seconds",
      "Seconds the oldest change event waiting to be applied has waited, per account with events waiting",
      s.events.map((e) => ({ value: e.oldestWaitingSince ? seconds(Math.max(0, s.at.getTime() - e.oldestWaitingSince.getTime())) : 0, labels: { account_id: e.accountId } }))
    ),
    gauge(
      "account_sync_api_version_warned_since_seconds",
      "While the service's answers to the pinned API version carry a deprecation warning: when it first did (Unix time)",
      state?.warnedSince ? [{ value: seconds(state.warnedSince.getTime()), labels: { version: state.answered } }] : []
    ),
    gauge(
      "account_sync_api_version_replaced",
      "1 while the service answers the pinned API version (SERVICE_GRAPHQL_VERSION) with another one, 0 while it answers with it",
      state ? [{ value: state.answered === s.apiVersion.pinned ? 0 : 1, labels: { pinned: s.apiVersion.pinned, answered: state.answered } }] : []
    )
  ]
}

/** The gauges above, read from the database at each scrape or write; a failed read leaves them out and says so. */
export const HealthMetricsLive = Layer.effect(
  MetricsOfState,
  Effect.map(Health, (health) => ({
    current: health.snapshot.pipe(
      Effect.map(healthMetrics),
      Effect.catchAll((e) => Effect.as(Effect.logWarning("could not read the state metrics (staleness, connections, API version) from the database", e), []))
    )
  }))
)

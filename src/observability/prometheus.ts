import { Config, Context, Effect, Metric, MetricKeyType, MetricState, Option, Schema } from "effect"
import type { MetricPair } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { AggregatorRegistry, prometheusContentType } from "prom-client"
import type { MetricObjectWithValues, MetricValue } from "prom-client"

/** The Content-Type of `/metrics`: Prometheus text exposition format 0.0.4. */
export const contentType = prometheusContentType

const Sample = Schema.Struct({
  value: Schema.Number,
  labels: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Undefined) }),
  metricName: Schema.optional(Schema.String)
})
type Sample = typeof Sample.Type

/**
 * One metric as prom-client's `getMetricsAsJSON` gives it (and `AggregatorRegistry.aggregate` takes it); a Schema,
 * since serve's event-consumer thread hands its metrics over in this form.
 */
export const PromMetric = Schema.Struct({
  name: Schema.String,
  help: Schema.String,
  type: Schema.Literal("counter", "gauge", "histogram"),
  /** How the samples of several threads (serve and its event consumer) combine: counts add up; a gauge is its owner's. */
  aggregator: Schema.Literal("sum", "first"),
  values: Schema.mutable(Schema.Array(Sample))
})
export type PromMetric = typeof PromMetric.Type

const labelsOf = (pair: MetricPair.MetricPair.Untyped, extra: Record<string, string> = {}) => {
  const labels: Record<string, string> = {}
  for (const tag of pair.metricKey.tags) labels[tag.key] = tag.value
  return { ...labels, ...extra }
}

const typeOf = (keyType: MetricKeyType.MetricKeyType<unknown, unknown>): PromMetric["type"] | undefined =>
  MetricKeyType.isCounterKey(keyType)
    ? "counter"
    : MetricKeyType.isGaugeKey(keyType)
      ? "gauge"
      : MetricKeyType.isHistogramKey(keyType)
        ? "histogram"
        : undefined

const samplesOf = (name: string, pair: MetricPair.MetricPair.Untyped): Array<Sample> => {
  const state = pair.metricState
  if (MetricState.isCounterState(state)) return [{ value: Number(state.count), labels: labelsOf(pair) }]
  if (MetricState.isGaugeState(state)) return [{ value: Number(state.value), labels: labelsOf(pair) }]
  if (MetricState.isHistogramState(state)) {
    // Effect's buckets are cumulative and end with +Inf, as the exposition format wants them
    const buckets: Array<Sample> = state.buckets.map(([bound, count]) => ({
      metricName: `${name}_bucket`,
      value: count,
      labels: labelsOf(pair, { le: bound === Infinity ? "+Inf" : String(bound) })
    }))
    if (!state.buckets.some(([bound]) => bound === Infinity)) {
      buckets.push({ metricName: `${name}_bucket`, value: state.count, labels: labelsOf(pair, { le: "+Inf" }) })
    }
    return [
      ...buckets,
      { metricName: `${name}_sum`, value: state.sum, labels: labelsOf(pair) },
      { metricName: `${name}_count`, value: state.count, labels: labelsOf(pair) }
    ]
  }
  return []
}

/** Only the connector's own metrics are exposed (not, e.g., Effect's runtime counters `effect_fiber_*`). */
export const metricPrefix = "account_sync_"

/**
 * Effect's metric snapshot as prom-client metric objects: one per name, its help text (the metric's description),
 * its type and every labelled sample. Summaries and frequencies (unused here) are left out.
 */
export const toPromClient = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): Array<PromMetric> => {
  const byName = new Map<string, PromMetric>()
  for (const pair of pairs) {
    const name = pair.metricKey.name
    if (!name.startsWith(metricPrefix)) continue
    const type = typeOf(pair.metricKey.keyType)
    if (type === undefined) continue
    const metric = byName.get(name) ?? {
      name,
      help: Option.getOrElse(pair.metricKey.description, () => name),
      type,
      aggregator: type === "gauge" ? ("first" as const) : ("sum" as const),
      values: []
    }
    metric.values.push(...samplesOf(name, pair))
    byName.set(name, metric)
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * Renders metrics in the Prometheus text exposition format (version 0.0.4) with prom-client: Effect's registry read
 * at the time of the call, combined with the metrics other threads handed over (see MetricsOfOtherThreads) the way
 * prom-client's cluster support combines processes (`AggregatorRegistry.aggregate`); prom-client writes the text
 * (HELP and label escaping, value formatting, histogram series).
 */
export const renderPrometheus = (sources: ReadonlyArray<ReadonlyArray<PromMetric>>): Promise<string> =>
  // prom-client's typings give `type` as a numeric enum; at run time (and in getMetricsAsJSON) it is these strings
  AggregatorRegistry.aggregate(sources as unknown as Array<Array<MetricObjectWithValues<MetricValue<string>>>>).metrics()

/** This thread's metrics, as prom-client metric objects. */
export const ownMetrics: Effect.Effect<Array<PromMetric>> = Effect.map(Metric.snapshot, toPromClient)

/** The metrics of threads besides this one (serve's event consumer runs in a worker thread of its own). */
export class MetricsOfOtherThreads extends Context.Tag("account-sync/MetricsOfOtherThreads")<
  MetricsOfOtherThreads,
  { readonly current: Effect.Effect<ReadonlyArray<PromMetric>> }
>() {}

/** Gauges of the installation's state (staleness, connections, API version), read from the database when asked. */
export class MetricsOfState extends Context.Tag("account-sync/MetricsOfState")<
  MetricsOfState,
  { readonly current: Effect.Effect<ReadonlyArray<PromMetric>> }
>() {}

/** The current values of every metric of this process (this thread's and the others'), and of the state, as Prometheus text. */
export const prometheusText = Effect.gen(function* () {
  const own = yield* ownMetrics
  const others = yield* Effect.serviceOption(MetricsOfOtherThreads)
  const theirs = Option.isSome(others) ? yield* others.value.current : []
  const stateSource = yield* Effect.serviceOption(MetricsOfState)
  const state = Option.isSome(stateSource) ? yield* stateSource.value.current : []
  return yield* Effect.promise(() => renderPrometheus([own, ...[theirs, state].filter((m) => m.length > 0)]))
})

/** Writes the metrics atomically (temp file + rename), as the node_exporter textfile collector expects. */
export const writeMetricsFile = (file: string) =>
  Effect.flatMap(prometheusText, (text) =>
    Effect.promise(async () => {
      const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
      await fs.writeFile(tmp, text, "utf8")
      await fs.rename(tmp, file)
    })
  )

/** Runs `effect`, then (however it ended) writes the metrics to METRICS_FILE when that is set: for cron runs. */
export const withMetricsFile = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Config.option(Config.string("METRICS_FILE")).pipe(Effect.orDie), (file) =>
    Option.isNone(file)
      ? effect
      : effect.pipe(
          Effect.ensuring(
            writeMetricsFile(file.value).pipe(
              Effect.catchAllDefect((e) => Effect.logWarning(`could not write METRICS_FILE ${file.value}: ${String(e)}`))
            )
          )
        )
  )

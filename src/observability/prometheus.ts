import { Config, Effect, Metric, MetricKeyType, MetricState, Option } from "effect"
import type { MetricPair } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')

const renderLabels = (labels: ReadonlyArray<{ readonly key: string; readonly value: string }>, extra: string = "") => {
  const parts = labels.map((l) => `${l.key}="${escapeLabel(l.value)}"`)
  if (extra) parts.push(extra)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

/** Renders a metrics snapshot in the Prometheus text exposition format (version 0.0.4). */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const byName = new Map<string, Array<MetricPair.MetricPair.Untyped>>()
  for (const pair of pairs) {
    const list = byName.get(pair.metricKey.name) ?? []
    list.push(pair)
    byName.set(pair.metricKey.name, list)
  }
  const lines: Array<string> = []
  for (const [name, list] of [...byName.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const first = list[0]!
    const description = first.metricKey.description
    const keyType = first.metricKey.keyType
    const type = MetricKeyType.isCounterKey(keyType)
      ? "counter"
      : MetricKeyType.isGaugeKey(keyType)
        ? "gauge"
        : MetricKeyType.isHistogramKey(keyType)
          ? "histogram"
          : "untyped"
    if (description) lines.push(`# HELP ${name} ${description}`)
    lines.push(`# TYPE ${name} ${type}`)
    for (const pair of list) {
      const labels = pair.metricKey.tags
      const state = pair.metricState
      if (MetricState.isCounterState(state)) {
        lines.push(`${name}${renderLabels(labels)} ${Number(state.count)}`)
      } else if (MetricState.isGaugeState(state)) {
        lines.push(`${name}${renderLabels(labels)} ${Number(state.value)}`)
      } else if (MetricState.isHistogramState(state)) {
        for (const [bound, count] of state.buckets) {
          lines.push(`${name}_bucket${renderLabels(labels, `le="${bound === Infinity ? "+Inf" : bound}"`)} ${count}`)
        }
        lines.push(`${name}_sum${renderLabels(labels)} ${state.sum}`)
        lines.push(`${name}_count${renderLabels(labels)} ${state.count}`)
      }
    }
  }
  return lines.join("\n") + "\n"
}

/** The current values of every metric of this process, as Prometheus text. */
export const prometheusText = Effect.map(Metric.snapshot, renderPrometheus)

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

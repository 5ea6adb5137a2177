import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"

/** One metric as prom-client combines them (see observability/prometheus.ts PromMetric). */
const Sample = Schema.Struct({
  value: Schema.Number,
  labels: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Undefined) }),
  metricName: Schema.optional(Schema.String)
})
export const PromMetricSchema = Schema.Struct({
  name: Schema.String,
  help: Schema.String,
  type: Schema.Literal("counter", "gauge", "histogram"),
  aggregator: Schema.Literal("sum", "first"),
  values: Schema.mutable(Schema.Array(Schema.mutable(Sample)))
})

/**
 * What serve asks the worker thread that applies its change events: its metrics, for serve's /metrics (the events
 * applied, failed, their lag and the queue depth are counted there), and whether it still answers.
 */
export class ConsumerRpcs extends RpcGroup.make(Rpc.make("metrics", { success: Schema.Array(PromMetricSchema) })) {}

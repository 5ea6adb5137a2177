import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { PromMetric } from "../observability/prometheus.js"

/**
 * What serve asks the worker thread that applies its change events: its metrics, for serve's /metrics (the events
 * applied, failed, their lag and the queue depth are counted there), and whether it still answers.
 */
export class ConsumerRpcs extends RpcGroup.make(Rpc.make("metrics", { success: Schema.Array(PromMetric) })) {}

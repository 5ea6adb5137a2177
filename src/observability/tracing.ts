import type { SpanExporter } from "@opentelemetry/sdk-trace-base"
import { Config, Effect, Layer, Option } from "effect"
import { redactingExporter } from "./redaction.js"

/**
 * A named export of a CommonJS package loaded with import(): by its name, or under `default` where the bundle gives
 * the package a chunk of its own (esbuild then hands over `module.exports` as the default export).
 */
const named = <M extends object, K extends keyof M>(module: M, name: K): M[K] =>
  module[name] ?? ((module as { readonly default?: M }).default as M)[name]

/**
 * Spans exported to `exporter` through the redaction of redaction.ts (no OAuth code or state, token or webhook
 * signature leaves the process), batched (`batch`, the default) or one by one.
 */
export const tracingTo = (exporter: SpanExporter, options: { readonly serviceName?: string; readonly batch?: boolean } = {}) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const [{ NodeSdk }, base] = yield* Effect.promise(() => Promise.all([import("@effect/opentelemetry"), import("@opentelemetry/sdk-trace-base")]))
      const BatchSpanProcessor = named(base, "BatchSpanProcessor")
      const SimpleSpanProcessor = named(base, "SimpleSpanProcessor")
      const safe = redactingExporter(exporter)
      return NodeSdk.layer(() => ({
        resource: { serviceName: options.serviceName ?? "account-sync", serviceVersion: "0.1.0" },
        spanProcessor: options.batch === false ? new SimpleSpanProcessor(safe) : new BatchSpanProcessor(safe)
      }))
    })
  )

/**
 * Spans (run, account, page, HTTP call) exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 * Unset: no exporter is loaded at all, and the tracer is off: Effect's own tracer would otherwise still make every
 * span (with its clock reads, attributes and HTTP request and response headers) that nothing reads.
 */
export const TracingLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const endpoint = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"))
    if (Option.isNone(endpoint)) return Layer.setTracerEnabled(false)
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("account-sync"))
    const OTLPTraceExporter = named(yield* Effect.promise(() => import("@opentelemetry/exporter-trace-otlp-http")), "OTLPTraceExporter")
    // the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS) itself
    return tracingTo(new OTLPTraceExporter(), { serviceName })
  })
)

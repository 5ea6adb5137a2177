import { Config, Effect, Layer, Option } from "effect"

/**
 * Spans (run, account, page, HTTP call) exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 * Unset: no exporter is loaded at all, so tracing costs nothing.
 */
export const TracingLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const endpoint = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"))
    if (Option.isNone(endpoint)) return Layer.empty
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("account-sync"))
    const [{ NodeSdk }, { BatchSpanProcessor }, { OTLPTraceExporter }] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/opentelemetry"),
        import("@opentelemetry/sdk-trace-base"),
        import("@opentelemetry/exporter-trace-otlp-http")
      ])
    )
    // the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS) itself
    return NodeSdk.layer(() => ({
      resource: { serviceName, serviceVersion: "0.1.0" },
      spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter())
    }))
  })
)

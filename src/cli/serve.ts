import { Command, Options } from "@effect/cli"
import { Effect, Layer, Option } from "effect"
import { SyncLayer } from "./app.js"
import { MetricsOfOtherThreads } from "../observability/prometheus.js"
import { startEventConsumer } from "./consumerThread.js"
import { EventRetention } from "../sync/events/EventRetention.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { HttpServerConfig } from "../config.js"
import { authServer } from "../http/Server.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"

const port = Options.integer("port").pipe(Options.withDescription("Port to listen on (default: $PORT or 8080)"), Options.optional)
const host = Options.text("host").pipe(Options.withDescription("Address to bind (default: $HOST or 0.0.0.0)"), Options.optional)

export const serveCommand = Command.make("serve", { port, host }, (options) =>
  Effect.gen(function* () {
    const fromEnv = yield* HttpServerConfig
    const settings = yield* OAuthClient
    const listen = {
      port: Option.getOrElse(options.port, () => fromEnv.port),
      host: Option.getOrElse(options.host, () => fromEnv.host),
      redirectPath: new URL(settings.redirectUri).pathname,
      limits: fromEnv.limits,
      ...(Option.isSome(fromEnv.metricsPort) ? { metricsPort: fromEnv.metricsPort.value } : {})
    }
    // the change events the inbox records are applied beside the server (in a thread of its own where it can), for as
    // long as it runs; serve stops when they can no longer be applied
    const consumer = yield* startEventConsumer
    // and the deliveries it is done with are pruned after WEBHOOK_EVENTS_RETENTION
    yield* Effect.forkScoped((yield* EventRetention).run)
    const server = Layer.launch(authServer(listen)).pipe(
      Effect.catchTag("ServeError", (e) =>
        Effect.fail(
          new ExitWith({
            code: ExitCodes.failure,
            message: `serve: cannot listen on ${listen.host}:${listen.port}${listen.metricsPort === undefined ? "" : ` and ${listen.metricsPort} (METRICS_PORT)`}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`
          })
        )
      ),
      (server) => Option.match(consumer.metrics, { onNone: () => server, onSome: (metrics) => Effect.provideService(server, MetricsOfOtherThreads, metrics) })
    )
    return yield* Effect.raceFirst(
      server,
      consumer.supervise.pipe(Effect.mapError((e) => new ExitWith({ code: ExitCodes.failure, message: `serve: ${e.message}` })))
    )
  }).pipe(Effect.scoped, Effect.provide(SyncLayer))
).pipe(
  Command.withDescription(
    "Serve /oauth/start, /oauth/callback (connect accounts in a browser), /webhooks (every change event, applied in the background; APP_DISCONNECT), /healthz, /readyz and /metrics (/readyz and /metrics on METRICS_PORT when set)."
  )
)

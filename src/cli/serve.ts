import { Command, Options } from "@effect/cli"
import type { ServeError } from "@effect/platform/HttpServerError"
import { Effect, Layer, Option } from "effect"
import { settingsFirst, SyncLayer } from "./app.js"
import { Alerts } from "../health/AlertWebhook.js"
import { MetricsOfOtherThreads, MetricsOfState } from "../observability/prometheus.js"
import { startEventConsumer } from "../serve/consumerThread.js"
import { EventRetention } from "../changes/EventRetention.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { HttpServerConfig } from "../config.js"
import { type AuthServerOptions, authServer } from "../serve/Server.js"
import { enqueuingLayer } from "../jobs/JobQueue.js"
import { JobSettingsConfig } from "../jobs/JobSettings.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"
import { checkPort } from "./optionChecks.js"

const port = Options.integer("port").pipe(
  Options.withPseudoName("PORT"),
  Options.withDescription("Port to listen on, 0 for any free one (default: PORT, else 8080)"),
  Options.optional
)
const host = Options.text("host").pipe(Options.withPseudoName("HOST"), Options.withDescription("Address to bind (default: HOST, else 0.0.0.0)"), Options.optional)

const cannotListen = (listen: AuthServerOptions) => (e: ServeError) =>
  Effect.fail(
    new ExitWith({
      code: ExitCodes.failure,
      message: `serve: cannot listen on ${listen.host}:${listen.port}${listen.metricsPort === undefined ? "" : ` and ${listen.metricsPort} (METRICS_PORT)`}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`
    })
  )

/** serve beside workers: the receiving side only, every connection and change event enqueued for them. */
const serveEnqueuing = (listen: AuthServerOptions) =>
  Layer.launch(authServer(listen)).pipe(
    Effect.catchTag("ServeError", cannotListen(listen)),
    Effect.provide(enqueuingLayer),
    Effect.catchTag("QueueUnavailable", (e) => Effect.fail(new ExitWith({ code: ExitCodes.usage, message: `serve: WORKERS=true: ${e.message}` })))
  )

export const serveCommand = withHelp(Command.make("serve", { port, host }, (options) =>
  Effect.gen(function* () {
    const badPort = Option.isSome(options.port) ? checkPort("--port", options.port.value, { allowZero: true }) : undefined
    if (badPort !== undefined) return yield* badPort
    return yield* serve(options)
  })
), {
  purpose: "Run the long-lived service: OAuth in a browser, change webhooks, health and metrics.",
  details:
    "Serves /oauth/start and /oauth/callback (admins connect accounts in a browser), /webhooks (every change event, applied in the background; APP_DISCONNECT at once), /healthz, /readyz and /metrics (the last two on METRICS_PORT when set). With WORKERS=true it only receives: connections and change events become jobs for `account-sync worker`.",
  examples: ["account-sync serve", "account-sync serve --port 8080 --host 127.0.0.1"]
})

const serve = (options: { readonly port: Option.Option<number>; readonly host: Option.Option<string> }) =>
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
    // with workers (WORKERS=true) the inbox enqueues an events job per account and the workers apply them, never beside
    // a sync of the account; without, the change events the inbox records are applied beside the server (in a thread
    // of its own where it can), for as long as it runs; serve stops when they can no longer be applied
    const { workers } = yield* JobSettingsConfig
    if (workers) return yield* serveEnqueuing(listen)
    const consumer = yield* startEventConsumer
    // and the deliveries it is done with are pruned after WEBHOOK_EVENTS_RETENTION
    yield* Effect.forkScoped((yield* EventRetention).run)
    // and conditions worth a message go to ALERT_WEBHOOK_URL when it is set
    yield* Effect.forkScoped((yield* Alerts).watch)
    const stateMetrics = yield* MetricsOfState
    const server = Layer.launch(authServer(listen)).pipe(
      Effect.catchTag("ServeError", cannotListen(listen)),
      (server) => Option.match(consumer.metrics, { onNone: () => server, onSome: (metrics) => Effect.provideService(server, MetricsOfOtherThreads, metrics) }),
      Effect.provideService(MetricsOfState, stateMetrics)
    )
    return yield* Effect.raceFirst(
      server,
      consumer.supervise.pipe(Effect.mapError((e) => new ExitWith({ code: ExitCodes.failure, message: `serve: ${e.message}` })))
    )
  }).pipe(Effect.scoped, Effect.provide(SyncLayer.pipe(Layer.provideMerge(settingsFirst(HttpServerConfig)))))

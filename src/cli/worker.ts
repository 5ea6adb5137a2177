import { Command, Options } from "@effect/cli"
import { ConfigProvider, Effect, Layer, Option, Schedule } from "effect"
import * as os from "node:os"
import { DatabaseConfig, HttpServerConfig } from "../config.js"
import { probesRouter } from "../serve/AuthRoutes.js"
import { serveRouter } from "../serve/Server.js"
import { makeJobsLayer } from "../jobs/index.js"
import { Worker } from "../jobs/Worker.js"
import { publishQueueDepth, QueueStatusLive } from "../jobs/QueueStatus.js"
import { SyncSettings } from "../sync/SyncSettings.js"
import { SyncLayer } from "./app.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"
import { checkAtLeast } from "./optionChecks.js"

const concurrency = Options.integer("concurrency").pipe(
  Options.withPseudoName("N"),
  Options.withDescription("Jobs (accounts) doing CPU work at once: fetching, reading and landing a page (default: SYNC_CONCURRENCY, else 4); an account waiting for its bucket holds none, and up to QUEUE_ACCOUNTS_IN_FLIGHT are held"),
  Options.optional
)

/**
 * This process's sessions carry its name (`<DATABASE_APPLICATION_NAME> worker <host>:<pid>`), so `status` can say
 * which worker holds which account (the account's advisory lock is held by one of its sessions).
 */
const namedSessions = (name: string) =>
  Layer.unwrapEffect(
    Effect.map(Effect.configProviderWith(Effect.succeed), (current) =>
      Layer.setConfigProvider(
        ConfigProvider.fromMap(new Map([["DATABASE_APPLICATION_NAME", name]])).pipe(ConfigProvider.orElse(() => current))
      )
    )
  )

export const workerCommand = withHelp(Command.make("worker", { concurrency }, (options) =>
  Effect.gen(function* () {
    const badConcurrency = Option.isSome(options.concurrency) ? checkAtLeast("--concurrency", options.concurrency.value, 1) : undefined
    if (badConcurrency !== undefined) return yield* badConcurrency
    const database = yield* DatabaseConfig
    if (Option.isNone(database.url)) {
      return yield* new ExitWith({
        code: ExitCodes.usage,
        message:
          "worker: the job queue needs a Postgres server (set DATABASE_URL). The embedded database (DATA_DIR) is one process's own: run `sync`, `backfill` and `serve` there instead"
      })
    }
    const configured = database.applicationName
    const name = `${os.hostname()}:${process.pid}`
    const sessions = `${configured} worker ${name}`
    const run = Effect.gen(function* () {
      const worker = yield* Worker
      const { metricsPort, host, limits } = yield* HttpServerConfig
      // /metrics, /healthz and /readyz on METRICS_PORT when set (a worker has no public routes)
      if (Option.isSome(metricsPort)) yield* Layer.launch(serveRouter(probesRouter, { port: metricsPort.value, host, limits })).pipe(Effect.forkScoped)
      // the queue's depth per kind and state for /metrics, every 15 s (one query, whoever else reads it)
      yield* Effect.forkScoped(
        Effect.repeat(publishQueueDepth.pipe(Effect.catchAll((e) => Effect.logWarning(`queue depth: ${e.message}`))), Schedule.spaced("15 seconds"))
      )
      const { concurrency } = yield* SyncSettings
      return yield* worker.run({ concurrency: Option.getOrElse(options.concurrency, () => concurrency), name })
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.merge(makeJobsLayer({ supervise: true, instanceName: `worker ${name}` }), QueueStatusLive).pipe(Layer.provideMerge(SyncLayer))
      )
    )
    return yield* run.pipe(
      Effect.catchTag("QueueUnavailable", (e) => Effect.fail(new ExitWith({ code: ExitCodes.usage, message: `worker: ${e.message}` }))),
      Effect.provide(namedSessions(sessions))
    )
  })
), {
  purpose: "Take jobs from the job queue until stopped: syncs, backfills and change events, one account per job.",
  details:
    "The queue is pg-boss in the warehouse's Postgres, so it needs DATABASE_URL; many workers on many hosts share the work. Each job works at most QUEUE_SLICE and leaves the rest to a follow-up job; SIGTERM hands the accounts in hand back at once. /metrics, /healthz and /readyz on METRICS_PORT when set.",
  examples: ["account-sync worker", "account-sync worker --concurrency 8"]
})

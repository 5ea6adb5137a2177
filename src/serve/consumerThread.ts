import { NodeWorker } from "@effect/platform-node"
import { RpcClient, type RpcClientError, type RpcGroup } from "@effect/rpc"
import { Data, Duration, Effect, Layer, Option, Ref, Schedule } from "effect"
import { Worker } from "node:worker_threads"
import { DatabaseTopology } from "../db/Database.js"
import { MetricsOfOtherThreads, type PromMetric } from "../observability/prometheus.js"
import { ConsumerRpcs } from "./ConsumerRpcs.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { restartsInARow } from "../changes/restarts.js"
import { consumerWorkerRole } from "./consumerWorker.js"

/**
 * Where serve applies the change events the webhooks queue. In a worker thread of its own on a real Postgres, so the
 * consumer's work (decoding pages, building statements) never holds up a webhook answer on serve's event loop (the
 * service wants one within a second, and may disable the webhooks of an app that is slow); serve supervises it and
 * shows its metrics at /metrics. On the embedded database (one session for every connection, see DatabaseTopology)
 * and when the program is not running from its bundle (a worker needs plain JavaScript), on serve's own loop.
 */

export class EventConsumerStopped extends Data.TaggedError("EventConsumerStopped")<{ readonly reason: string }> {
  override get message() {
    return `the change-event consumer stopped: ${this.reason}`
  }
}

/** The program's bundle (every module of it has the bundle's URL); undefined when running from the TypeScript sources. */
const bundleEntry = (): URL | undefined => {
  const self = new URL(import.meta.url)
  return self.pathname.endsWith(".ts") ? undefined : self
}

/** How serve keeps the worker going. */
export interface WorkerSupervision {
  /** How long a new worker may take to start (load the bundle, connect, check the migrations). */
  readonly startTimeout: Duration.Duration
  /** The worker is asked for its metrics this often; no answer within `answerTimeout` and it is replaced. */
  readonly heartbeat: Duration.Duration
  readonly answerTimeout: Duration.Duration
  /** /metrics waits this long for the worker's figures before showing the last ones it gave. */
  readonly scrapeTimeout: Duration.Duration
  /** When a new worker replaces one that failed; serve stops once it gives up. */
  readonly restarts: Schedule.Schedule<unknown, EventConsumerStopped>
}

export const defaultSupervision: WorkerSupervision = {
  startTimeout: Duration.seconds(60),
  heartbeat: Duration.seconds(5),
  answerTimeout: Duration.seconds(10),
  scrapeTimeout: Duration.seconds(2),
  restarts: restartsInARow(10)
}

type Client = RpcClient.RpcClient<RpcGroup.Rpcs<typeof ConsumerRpcs>, RpcClientError.RpcClientError>

export interface RunningConsumer {
  /** Runs for as long as serve does; fails when the consumer cannot be kept running. */
  readonly supervise: Effect.Effect<never, EventConsumerStopped>
  /** The consumer's metrics for serve's /metrics when it runs in a thread of its own. */
  readonly metrics: Option.Option<MetricsOfOtherThreads["Type"]>
}

const inline = Effect.map(EventConsumer, (consumer): RunningConsumer => ({
  supervise: consumer.run.pipe(Effect.mapError((e) => new EventConsumerStopped({ reason: `the event queue cannot be read: ${e.message}` }))),
  metrics: Option.none()
}))

/** The consumer in worker threads `spawn` starts, one at a time, each replaced when it fails or stops answering. */
export const inWorker = (spawn: () => Worker, supervision: WorkerSupervision = defaultSupervision): Effect.Effect<RunningConsumer> =>
  Effect.gen(function* () {
    const current = yield* Ref.make<Option.Option<Client>>(Option.none())
    const lastMetrics = yield* Ref.make<ReadonlyArray<PromMetric>>([])
    const ask = (client: Client, timeout: Duration.Duration) =>
      client.metrics().pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new EventConsumerStopped({ reason: `its thread did not answer within ${Duration.format(timeout)}` }) }),
        Effect.mapError((e) => (e instanceof EventConsumerStopped ? e : new EventConsumerStopped({ reason: `its thread failed: ${e.message}` }))),
        Effect.tap((metrics) => Ref.set(lastMetrics, metrics))
      )

    const generation = Effect.gen(function* () {
      const protocol = yield* Layer.build(
        RpcClient.layerProtocolWorker({ size: 1 }).pipe(
          Layer.provide(NodeWorker.layerPlatform(spawn))
        )
      ).pipe(
        Effect.timeoutFail({
          duration: supervision.startTimeout,
          onTimeout: () => new EventConsumerStopped({ reason: `its thread did not start within ${Duration.format(supervision.startTimeout)}` })
        }),
        Effect.mapError((e) => (e instanceof EventConsumerStopped ? e : new EventConsumerStopped({ reason: `its thread could not start: ${e.message}` })))
      )
      const client = (yield* Effect.provide(RpcClient.make(ConsumerRpcs), protocol)) as Client
      yield* Ref.set(current, Option.some(client))
      yield* Effect.logInfo("change events are applied in a worker thread")
      return yield* Effect.forever(Effect.zipRight(Effect.sleep(supervision.heartbeat), ask(client, supervision.answerTimeout)))
    }).pipe(Effect.scoped, Effect.ensuring(Ref.set(current, Option.none())))

    return {
      supervise: generation.pipe(
        Effect.tapError((e) => Effect.logWarning(`${e.message}; starting another`)),
        Effect.retry(supervision.restarts)
      ),
      metrics: Option.some({
        current: Effect.flatMap(Ref.get(current), (client) =>
          Option.isNone(client) ? Ref.get(lastMetrics) : ask(client.value, supervision.scrapeTimeout).pipe(Effect.orElse(() => Ref.get(lastMetrics)))
        )
      })
    } satisfies RunningConsumer
  })

/** The consumer as this deployment runs it (see the module's comment). */
export const startEventConsumer: Effect.Effect<RunningConsumer, never, EventConsumer | DatabaseTopology> = Effect.gen(function* () {
  const entry = bundleEntry()
  if ((yield* DatabaseTopology).singleSession || entry === undefined) return yield* inline
  return yield* inWorker(() => new Worker(entry, { workerData: { role: consumerWorkerRole } }))
})

import { WorkerRunner } from "@effect/platform"
import { NodeContext, NodeRuntime, NodeWorkerRunner } from "@effect/platform-node"
import { RpcServer } from "@effect/rpc"
import { Effect, Layer } from "effect"
import { isMainThread, workerData } from "node:worker_threads"
import { LoggingLive } from "../observability/logging.js"
import { ownMetrics } from "../observability/prometheus.js"
import { TracingLive } from "../observability/tracing.js"
import { ConsumerRpcs } from "./ConsumerRpcs.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { SyncLayer } from "../cli/app.js"

/** The `workerData.role` of serve's event-consumer thread (the program's bundle runs in it again). */
export const consumerWorkerRole = "account-sync/event-consumer"

/** Whether this thread is serve's event-consumer worker. */
export const isConsumerWorker = (): boolean =>
  !isMainThread && typeof workerData === "object" && workerData !== null && (workerData as { role?: unknown }).role === consumerWorkerRole

const answers = RpcServer.layer(ConsumerRpcs).pipe(
  Layer.provide(ConsumerRpcs.toLayer({ metrics: () => ownMetrics })),
  Layer.provide(RpcServer.layerProtocolWorkerRunner),
  Layer.provide(NodeWorkerRunner.layer)
)

/**
 * The worker's whole life: it applies the change events (EventConsumer.run) and answers serve's questions until
 * serve closes it (then the consumer is interrupted: an account's transaction in flight rolls back, its events stay
 * queued) or the consumer gives up (the thread ends failed and serve starts another).
 */
export const runConsumerWorker = (): void =>
  Effect.gen(function* () {
    const consumer = yield* EventConsumer
    yield* Effect.raceFirst(WorkerRunner.launch(answers), consumer.run)
  }).pipe(
    Effect.provide(SyncLayer),
    Effect.provide(Layer.merge(LoggingLive, TracingLive)),
    Effect.provide(NodeContext.layer),
    Effect.annotateLogs({ thread: "event-consumer" }),
    (program) => NodeRuntime.runMain(program, { disableErrorReporting: false, disablePrettyLogger: true })
  )

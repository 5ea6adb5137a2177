// A stand-in for serve's event-consumer thread (src/serve/consumerWorker.ts) that answers the same questions over the
// same worker protocol, and then fails the way `workerData.mode` says: "exits" (the thread ends after its first
// answer) or "hangs" (it never answers).
import { WorkerRunner } from "@effect/platform"
import { NodeRuntime, NodeWorkerRunner } from "@effect/platform-node"
import { Rpc, RpcGroup, RpcServer } from "@effect/rpc"
import { Effect, Layer, Schema } from "effect"
import { workerData } from "node:worker_threads"

// ConsumerRpcs as it crosses the wire
class Rpcs extends RpcGroup.make(Rpc.make("metrics", { success: Schema.Array(Schema.Unknown) })) {}

const { mode, generation } = workerData
const figures = [
  { name: "account_sync_stand_in_generation", help: "which thread answered", type: "gauge", aggregator: "first", values: [{ value: generation, labels: {} }] }
]

const handlers = Rpcs.toLayer({
  metrics: () =>
    mode === "hangs"
      ? Effect.never
      : Effect.sync(() => {
          setTimeout(() => process.exit(1), 20)
          return figures
        })
})

WorkerRunner.launch(
  RpcServer.layer(Rpcs).pipe(Layer.provide(handlers), Layer.provide(RpcServer.layerProtocolWorkerRunner), Layer.provide(NodeWorkerRunner.layer))
).pipe(NodeRuntime.runMain)

import { Effect, Layer } from "effect"
import { jobsStream } from "../../src/sync/streams/jobs.js"
import { Checkpoints, CheckpointsLive } from "../../src/sync/pass/Checkpoints.js"
import { Warehouse, WarehouseLive } from "../../src/sync/landing/Warehouse.js"
import { finishFullPass } from "../../src/sync/pass/PassEnd.js"
import { TestDatabaseLive } from "./database.js"
import { landed, rowsRead } from "./jobFixtures.js"

/** The Warehouse and Checkpoints over a fresh migrated schema (sync/Warehouse*.test.ts). */
export const TestLayer = WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))

/**
 * Lands a page of the pass in progress as the engine does: its rows with the checkpoint at `position`; `last` ends the
 * pass (an incremental one in the same transaction, a full one with its sweep).
 */
export const landPage = (
  accountId: string,
  nodes: ReturnType<typeof landed>,
  options: { position?: number; last?: boolean; kind?: "full" | "incremental"; bodies?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function* () {
    const warehouse = yield* Warehouse
    const checkpoints = yield* Checkpoints
    const kind = options.kind ?? "full"
    const highWaterMark = nodes.length > 0 ? nodes.map((n) => n.node.updatedAt as string).sort().at(-1)! : null
    const written = yield* warehouse.land(
      {
        accountId,
        stream: jobsStream,
        // with bodies: a page for each node, landed from its body
        pages: options.bodies ? nodes.map((n, i) => ({ nodes: [n], body: Buffer.from(options.bodies![i]!) })) : rowsRead(nodes),
        pass: { kind, partition: 0, position: options.position ?? 0, anchors: nodes.map((n) => n.node.id), shifted: false, highWaterMark }
      },
      options.last === true && kind === "incremental" ? checkpoints.finishIncremental(accountId, jobsStream.name, highWaterMark) : undefined
    )
    const deleted = options.last === true && kind === "full" ? (yield* finishFullPass(accountId, jobsStream)).deleted : 0
    return { written, deleted }
  })

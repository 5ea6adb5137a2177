import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { PreparedStatements } from "../db/preparedStatements.js"
import { rowsOrDie } from "../db/rows.js"
import { Checkpoints } from "./Checkpoints.js"
import { pageJson } from "./landing/pageParams.js"
import { PageLanded, pageStatement } from "./landing/pageStatement.js"
import { pageSteps, type PageValues } from "./landing/steps.js"
import { sweepPlannerSettings, sweepStatement } from "./landing/sweep.js"
import type { PassKind, ReceivedNode } from "./model.js"
import type { AnyStream } from "./streams/Stream.js"

/** Consecutive pages of one pass, landed by one statement. */
export interface Batch {
  readonly accountId: string
  readonly stream: AnyStream
  readonly kind: PassKind
  readonly nodes: ReadonlyArray<ReceivedNode>
  /**
   * The response bodies `nodes` were read from, in order (each holds its nodes at `data`, the stream's connection
   * path, `nodes`). When every node is landed as received, Postgres takes the rows from these texts: the nodes are
   * not serialized again. Without them (or when a node was changed by its decoder) the nodes are serialized.
   */
  readonly bodies?: ReadonlyArray<string>
  /** The batch's endCursor; null (empty page) keeps the stored one. */
  readonly endCursor: string | null
  /** Last page of the pass: a full pass sweeps deletions; an incremental pass moves the high-water mark. */
  readonly finishesPass: boolean
  /** See PassPlan.batchHighWater. */
  readonly highWaterMark: string | null
}

export interface LandResult {
  /** Rows inserted or changed (unchanged rows are not rewritten). */
  readonly written: number
  /** Rows marked deleted by the end-of-pass sweep. */
  readonly deleted: number
}

export class Warehouse extends Context.Tag("account-sync/Warehouse")<
  Warehouse,
  {
    /**
     * One transaction: the batch's rows, the ids seen (full pass), the checkpoint; and at the pass's end, its finish
     * (the sweep of a full pass). A batch that reached the database finishes or rolls back even when the run is
     * interrupted, and a repeat of a committed batch (after a lost acknowledgement) changes nothing.
     */
    readonly land: (batch: Batch) => Effect.Effect<LandResult, SqlError.SqlError>
  }
>() {}

export const WarehouseLive = Layer.effect(
  Warehouse,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements
    const checkpoints = yield* Checkpoints

    const runPage = SqlSchema.single({
      Request: Schema.Any,
      Result: PageLanded,
      execute: (values: PageValues) => {
        const [text, params] = pageStatement(sql, pageSteps, values).compile()
        return sql.unsafe(prepared.keep(text), params)
      }
    })

    const sweep = (accountId: string, stream: AnyStream) =>
      Effect.gen(function* () {
        yield* sql.unsafe(sweepPlannerSettings)
        return (yield* sql.unsafe<{ id: string }>(sweepStatement(stream), [accountId, stream.name])).length
      })

    const land = (batch: Batch) => {
      // one row per id: an upsert cannot change the same row twice in one statement
      const unique = [...new Map(batch.nodes.map((n) => [n.node.id, n] as const)).values()]
      // the bodies hold every node as received: usable only when no id repeats
      const bodies = unique.length === batch.nodes.length ? batch.bodies : undefined
      const values: PageValues = {
        accountId: batch.accountId,
        stream: batch.stream,
        kind: batch.kind,
        page: pageJson(batch.stream, unique, bodies),
        endCursor: batch.endCursor,
        highWaterMark: batch.highWaterMark
      }
      const page = rowsOrDie(runPage(values))
      const landing = batch.finishesPass
        ? sql.withTransaction(
            Effect.gen(function* () {
              const landed = yield* page
              if (!landed.open) return { written: 0, deleted: 0 }
              const deleted = batch.kind === "full" && landed.tracks_seen === true ? yield* sweep(batch.accountId, batch.stream) : 0
              yield* checkpoints.finish(batch.accountId, batch.stream.name, batch.kind, batch.highWaterMark)
              return { written: landed.written, deleted }
            })
          )
        : Effect.map(page, (landed) => ({ written: landed.written, deleted: 0 }))
      return landing.pipe(
        Effect.uninterruptible,
        retryOnConnectionLoss,
        Effect.withSpan("Warehouse.land", { attributes: { accountId: batch.accountId, stream: batch.stream.name, rows: unique.length } })
      )
    }

    return Warehouse.of({ land })
  })
)

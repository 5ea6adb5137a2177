import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { PreparedStatements } from "../db/preparedStatements.js"
import { rowsOrDie } from "../db/rows.js"
import { Checkpoints } from "./Checkpoints.js"
import { pageJson } from "./landing/pageParams.js"
import { PageLanded, pageStatement } from "./landing/pageStatement.js"
import { pageSteps, type PageValues, type PassProgress } from "./landing/steps.js"
import { dependentSweepStatements, markDeletedStatements, sweepPlannerSettings, sweepStatement } from "./landing/sweep.js"
import type { ReceivedNode } from "./model.js"
import type { AnyStream } from "./streams/Stream.js"

/** Rows to land by one statement: consecutive pages of a pass, or rows read outside one. */
export interface Batch {
  readonly accountId: string
  readonly stream: AnyStream
  readonly nodes: ReadonlyArray<ReceivedNode>
  /**
   * The response bodies `nodes` were read from, in order (each holds its nodes at `data`, the stream's connection
   * path, `nodes`). When every node is landed as received, Postgres takes the rows from these texts: the nodes are
   * not serialized again. Without them (or when a node was changed by its decoder) the nodes are serialized.
   */
  readonly bodies?: ReadonlyArray<string | undefined>
  /** The pass the rows belong to, where it stands once they land; undefined: rows read outside a pass. */
  readonly pass: PassProgress | undefined
  /** The last batch of an incremental pass: the pass ends (its mark moves) in the batch's transaction. */
  readonly endsPass?: boolean
  /** The ids go to the full pass's seen ids (default: when the batch belongs to a full pass). */
  readonly recordSeen?: boolean
  /** When the first of the rows was asked of the service: a row marked deleted after that is not brought back. */
  readonly fetchedAt?: Date
}

const IdRow = Schema.Struct({ id: Schema.String })

export class Warehouse extends Context.Tag("account-sync/Warehouse")<
  Warehouse,
  {
    /**
     * One statement (one transaction): the batch's rows, the ids seen (full pass), the checkpoint; the end of an
     * incremental pass in the same transaction. A batch that reached the database finishes or rolls back even when the
     * run is interrupted, and a repeat of a committed batch (after a lost acknowledgement) changes nothing.
     * Returns the rows inserted or changed (unchanged rows are not rewritten).
     */
    readonly land: (batch: Batch) => Effect.Effect<number, SqlError.SqlError>
    /**
     * Live rows of the account that the full pass in progress has not seen (the candidates of its sweep), in id
     * order after `after`, up to `limit`.
     */
    readonly unseen: (accountId: string, stream: AnyStream, after: string, limit: number) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    /**
     * Rows found gone outside a pass (a destroy event, a re-read that no longer finds them), marked deleted as of `at`
     * with their line items and custom fields, in one transaction. Returns the ids that were live.
     */
    readonly markDeleted: (accountId: string, stream: AnyStream, ids: ReadonlyArray<string>, at: Date) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    /** The end of a full pass, in one transaction: the live rows it did not see are marked deleted, then the pass finishes. */
    readonly finishFullPass: (accountId: string, stream: AnyStream) => Effect.Effect<{ readonly deleted: number }, SqlError.SqlError>
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
        const [text, params] = pageStatement(sql, pageSteps(values.stream), values).compile()
        return sql.unsafe(prepared.keep(text), params)
      }
    })

    const land = (batch: Batch) => {
      // one row per id: an upsert cannot change the same row twice in one statement
      const unique = [...new Map(batch.nodes.map((n) => [n.node.id, n] as const)).values()]
      // the bodies hold every node as received: usable only when no id repeats and every page kept its body
      const bodies =
        unique.length === batch.nodes.length && batch.bodies !== undefined && batch.bodies.every((b) => b !== undefined)
          ? (batch.bodies as ReadonlyArray<string>)
          : undefined
      const values: PageValues = {
        accountId: batch.accountId,
        stream: batch.stream,
        page: pageJson(batch.stream, unique, bodies),
        pass: batch.pass,
        recordSeen: batch.recordSeen ?? batch.pass?.kind === "full",
        fetchedAt: batch.fetchedAt
      }
      const page = rowsOrDie(runPage(values))
      const pass = batch.pass
      const landing =
        batch.endsPass && pass !== undefined
          ? sql.withTransaction(
              Effect.gen(function* () {
                const landed = yield* page
                if (landed.open) yield* checkpoints.finish(batch.accountId, batch.stream.name, pass.kind, pass.highWaterMark)
                return landed
              })
            )
          : page
      return landing.pipe(
        Effect.map((landed) => (landed.open ? landed.written : 0)),
        Effect.uninterruptible,
        retryOnConnectionLoss,
        Effect.withSpan("Warehouse.land", { attributes: { accountId: batch.accountId, stream: batch.stream.name, rows: unique.length } })
      )
    }

    const unseenRows = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, stream: Schema.String, table: Schema.String, after: Schema.String, limit: Schema.Number }),
      Result: IdRow,
      execute: ({ accountId, stream, table, after, limit }) => sql`
        SELECT t.id FROM ${sql(table)} t
        WHERE t.account_id = ${accountId} AND t.deleted_at IS NULL AND t.id > ${after}
          AND NOT EXISTS (SELECT 1 FROM sync_pass_seen s WHERE s.account_id = t.account_id AND s.stream = ${stream} AND s.id = t.id)
        ORDER BY t.id LIMIT ${limit}`
    })
    const unseen = (accountId: string, stream: AnyStream, after: string, limit: number) =>
      Effect.map(rowsOrDie(unseenRows({ accountId, stream: stream.name, table: stream.table, after, limit })), (rows) => rows.map((r) => r.id)).pipe(
        retryOnConnectionLoss
      )

    const finishFullPass = (accountId: string, stream: AnyStream) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const tracks = yield* sql<{ tracks_seen: boolean }>`
              SELECT tracks_seen FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream.name} AND pass_kind = 'full' FOR UPDATE`
            if (tracks.length === 0) return { deleted: 0 }
            let deleted = 0
            if (tracks[0]!.tracks_seen) {
              yield* sql.unsafe(sweepPlannerSettings)
              deleted = (yield* sql.unsafe<{ id: string }>(sweepStatement(stream), [accountId, stream.name])).length
              if (deleted > 0) for (const statement of dependentSweepStatements(stream)) yield* sql.unsafe(statement, [accountId])
            }
            yield* checkpoints.finish(accountId, stream.name, "full", null)
            return { deleted }
          })
        )
        .pipe(Effect.uninterruptible, retryOnConnectionLoss)

    const markDeleted = (accountId: string, stream: AnyStream, ids: ReadonlyArray<string>, at: Date) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const [parents, ...dependents] = markDeletedStatements(stream)
            const params = [accountId, JSON.stringify(ids), at.toISOString()]
            const marked = yield* sql.unsafe<{ id: string }>(parents!, params)
            for (const statement of dependents) yield* sql.unsafe(statement, params)
            return marked.map((r) => r.id)
          })
        )
        .pipe(Effect.uninterruptible, retryOnConnectionLoss)

    return Warehouse.of({ land, unseen, markDeleted, finishFullPass })
  })
)

import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, FiberRef, Layer, Option, Predicate, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { PreparedStatements } from "../db/preparedStatements.js"
import { rowsOrDie } from "../db/rows.js"
import { currentAccountLease, leaseHeld, type LockSession } from "./AccountLocks.js"
import { Checkpoints, type DeletionsCheck } from "./Checkpoints.js"
import { AccountLockLost } from "./errors.js"
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
  readonly bodies?: ReadonlyArray<Uint8Array | undefined>
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
const StoredValueRow = Schema.Struct({ id: Schema.String, v: Schema.NullOr(Schema.String) })

export class Warehouse extends Context.Tag("account-sync/Warehouse")<
  Warehouse,
  {
    /**
     * One statement (one transaction): the batch's rows, the ids seen (full pass), the checkpoint; the end of an
     * incremental pass in the same transaction. A batch that reached the database finishes or rolls back even when the
     * run is interrupted, and a repeat of a committed batch (after a lost acknowledgement) changes nothing.
     * Returns the rows inserted or changed (unchanged rows are not rewritten).
     */
    readonly land: (batch: Batch) => Effect.Effect<number, SqlError.SqlError | AccountLockLost>
    /**
     * Live rows of the account that the full pass in progress has not seen (the candidates of its sweep), in id
     * order after `after`, up to `limit`.
     */
    readonly unseen: (accountId: string, stream: AnyStream, after: string, limit: number) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    /**
     * Rows found gone outside a pass (a destroy event, a re-read that no longer finds them), marked deleted as of `at`
     * with their line items and custom fields, in one transaction. Returns the ids that were live.
     */
    readonly markDeleted: (
      accountId: string,
      stream: AnyStream,
      ids: ReadonlyArray<string>,
      at: Date
    ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError | AccountLockLost>
    /**
     * The end of a full pass, in one transaction: the live rows it did not see are marked deleted (unless `deletions`
     * says they were not checked), then the pass finishes, recording what it could say about deletions.
     */
    readonly finishFullPass: (
      accountId: string,
      stream: AnyStream,
      deletions?: DeletionsCheck
    ) => Effect.Effect<{ readonly deleted: number }, SqlError.SqlError | AccountLockLost>
    /** One mapped column of stored rows (live or marked deleted), as text, by id: what a change event's re-read needs of them. */
    readonly storedColumn: (
      accountId: string,
      stream: AnyStream,
      ids: ReadonlyArray<string>,
      column: string
    ) => Effect.Effect<ReadonlyMap<string, string | null>, SqlError.SqlError>
    /** Ids of the live rows whose `column` (a link) names one of `ids`, in id order: the rows that hold their data. */
    readonly idsLinkedTo: (
      accountId: string,
      stream: AnyStream,
      column: string,
      ids: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
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

    /**
     * `write` with the session holding the account's lock this fiber took (none: no lock, or the embedded database),
     * which it checks in its own transaction: when the lock was lost with its session, it is taken again and `write`
     * runs once more (the first wrote nothing), unless another process holds the account now.
     */
    const underLease = <A, E, R>(accountId: string, write: (session: LockSession | undefined) => Effect.Effect<A, E | AccountLockLost, R>) =>
      Effect.flatMap(FiberRef.get(currentAccountLease), (held) => {
        const lease = Option.getOrUndefined(Option.filter(held, (l) => l.accountId === accountId))
        if (lease === undefined) return write(undefined)
        return Effect.flatMap(lease.session, write).pipe(
          Effect.catchIf(
            (e): e is AccountLockLost => Predicate.isTagged(e, "AccountLockLost"),
            (lost) => Effect.flatMap(lease.retake, (retaken) => (retaken ? Effect.flatMap(lease.session, write) : Effect.fail(lost)))
          )
        )
      })
    /** Fails, inside the caller's transaction, when `session` no longer holds the account. */
    const stillHeld = (accountId: string, stream: AnyStream, session: LockSession | undefined) =>
      session === undefined
        ? Effect.void
        : Effect.flatMap(sql<{ held: boolean }>`SELECT ${leaseHeld(sql, accountId, session)} AS held`, (rows) =>
            rows[0]?.held === true ? Effect.void : Effect.fail(new AccountLockLost({ accountId, stream: stream.name }))
          )

    const land = (batch: Batch) => underLease(batch.accountId, (lease) => {
      // one row per id: an upsert cannot change the same row twice in one statement
      const unique = [...new Map(batch.nodes.map((n) => [n.node.id, n] as const)).values()]
      // the bodies hold every node as received: usable only when no id repeats and every page kept its body
      const bodies =
        unique.length === batch.nodes.length && batch.bodies !== undefined && batch.bodies.every((b) => b !== undefined)
          ? (batch.bodies as ReadonlyArray<Uint8Array>)
          : undefined
      const values: PageValues = {
        accountId: batch.accountId,
        stream: batch.stream,
        page: pageJson(batch.stream, unique, bodies),
        pass: batch.pass,
        recordSeen: batch.recordSeen ?? batch.pass?.kind === "full",
        fetchedAt: batch.fetchedAt,
        lease
      }
      const page = Effect.flatMap(rowsOrDie(runPage(values)), (landed) =>
        landed.held ? Effect.succeed(landed) : Effect.fail(new AccountLockLost({ accountId: batch.accountId, stream: batch.stream.name }))
      )
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
        retryOnConnectionLoss
      )
    }).pipe(Effect.withSpan("Warehouse.land", { attributes: { accountId: batch.accountId, stream: batch.stream.name, rows: batch.nodes.length } }))

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

    const finishFullPass = (accountId: string, stream: AnyStream, deletions?: DeletionsCheck) => underLease(accountId, (lease) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* stillHeld(accountId, stream, lease)
            const tracks = yield* sql<{ tracks_seen: boolean }>`
              SELECT tracks_seen FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream.name} AND pass_kind = 'full' FOR UPDATE`
            if (tracks.length === 0) return { deleted: 0 }
            let deleted = 0
            if (tracks[0]!.tracks_seen && (deletions?.unchecked ?? null) === null) {
              yield* sql.unsafe(sweepPlannerSettings)
              deleted = (yield* sql.unsafe<{ id: string }>(sweepStatement(stream), [accountId, stream.name])).length
              if (deleted > 0) for (const statement of dependentSweepStatements(stream)) yield* sql.unsafe(statement, [accountId])
            }
            yield* checkpoints.finish(accountId, stream.name, "full", null, deletions)
            return { deleted }
          })
        )
        .pipe(Effect.uninterruptible, retryOnConnectionLoss))

    const markDeleted = (accountId: string, stream: AnyStream, ids: ReadonlyArray<string>, at: Date) => underLease(accountId, (lease) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* stillHeld(accountId, stream, lease)
            const [parents, ...dependents] = markDeletedStatements(stream)
            const params = [accountId, JSON.stringify(ids), at.toISOString()]
            const marked = yield* sql.unsafe<{ id: string }>(parents!, params)
            for (const statement of dependents) yield* sql.unsafe(statement, params)
            return marked.map((r) => r.id)
          })
        )
        .pipe(Effect.uninterruptible, retryOnConnectionLoss))

    const storedRows = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, table: Schema.String, column: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: StoredValueRow,
      execute: ({ accountId, table, column, ids }) =>
        sql`SELECT id, ${sql(column)}::text AS v FROM ${sql(table)} WHERE account_id = ${accountId} AND id IN ${sql.in(ids)}`
    })
    const storedColumn = (accountId: string, stream: AnyStream, ids: ReadonlyArray<string>, column: string) => {
      if (!stream.columns.some((c) => c.column === column)) return Effect.dieMessage(`stream ${stream.name} has no column ${column}`)
      if (ids.length === 0) return Effect.succeed(new Map<string, string | null>())
      return Effect.map(rowsOrDie(storedRows({ accountId, table: stream.table, column, ids })), (rows) => new Map(rows.map((r) => [r.id, r.v]))).pipe(
        retryOnConnectionLoss
      )
    }

    const linkedRows = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, table: Schema.String, column: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: IdRow,
      execute: ({ accountId, table, column, ids }) =>
        sql`SELECT id FROM ${sql(table)} WHERE account_id = ${accountId} AND ${sql(column)} IN ${sql.in(ids)} AND deleted_at IS NULL ORDER BY id`
    })
    const idsLinkedTo = (accountId: string, stream: AnyStream, column: string, ids: ReadonlyArray<string>) => {
      if (!stream.columns.some((c) => c.column === column && c.link !== undefined)) return Effect.dieMessage(`stream ${stream.name} has no link column ${column}`)
      if (ids.length === 0) return Effect.succeed([])
      return Effect.map(rowsOrDie(linkedRows({ accountId, table: stream.table, column, ids })), (rows) => rows.map((r) => r.id)).pipe(retryOnConnectionLoss)
    }

    return Warehouse.of({ land, unseen, markDeleted, finishFullPass, storedColumn, idsLinkedTo })
  })
)

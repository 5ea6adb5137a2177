import { SqlClient, type SqlError, SqlSchema, type Statement } from "@effect/sql"
import { Context, Effect, Layer, Metric, Schema } from "effect"
import { retryOnConnectionLoss } from "../../db/connectionRetry.js"
import { PreparedStatements } from "../../db/preparedStatements.js"
import { rowsOrDie } from "../../db/rows.js"
import * as Metrics from "../../observability/metrics.js"
import { heldLease, leasedTransaction } from "../AccountLeases.js"
import type { PassProgress } from "../model.js"
import { AccountLockLost } from "../errors.js"
import { pageJson, type PageRows } from "./pageParams.js"
import { releaseBytes } from "./releaseBytes.js"
import { PageLanded, pageStatement } from "./pageStatement.js"
import type { LandingStep, PageValues } from "./LandingStep.js"
import { pageSteps } from "./steps.js"
import { dependentSweepStatements, markDeletedStatements, sweepPlannerSettings, sweepStatement } from "./sweep.js"
import type { AnyStream } from "../streams/Stream.js"
import { runSpan } from "../../observability/spans.js"

/** Rows to land by one statement: consecutive pages of a pass, or rows read outside one. */
export interface Batch {
  readonly accountId: string
  readonly stream: AnyStream
  /**
   * The pages, in the order read: a page that kept its body lands from it as received (Postgres takes the rows out of
   * the body; nothing is serialized again), the others from their nodes. An id in more than one page (pages join on
   * rows read again) lands as last read.
   */
  readonly pages: ReadonlyArray<PageRows>
  /** The pass the rows belong to, where it stands once they land; undefined: rows read outside a pass. */
  readonly pass: PassProgress | undefined
  /** The ids go to the full pass's seen ids (default: when the batch belongs to a full pass). */
  readonly recordSeen?: boolean
  /** When the first of the rows was asked of the service: a row marked deleted after that is not brought back. */
  readonly fetchedAt?: Date
  /**
   * Steps after the batch's own, in its statement: writes that commit with the batch and only while its pass is in
   * progress (they depend on `pass`), such as the run's end with the batch that ends an incremental pass.
   */
  readonly then?: ReadonlyArray<LandingStep>
}

/** The nodes of a batch's pages (an id in two pages counts twice). */
export const rowsIn = (pages: ReadonlyArray<PageRows>): number => pages.reduce((n, page) => n + page.nodes.length, 0)

const IdRow = Schema.Struct({ id: Schema.String })
const StoredValueRow = Schema.Struct({ id: Schema.String, v: Schema.NullOr(Schema.String) })

export class Warehouse extends Context.Tag("account-sync/Warehouse")<
  Warehouse,
  {
    /**
     * One statement (one transaction): the batch's rows, the ids seen (full pass), the checkpoint. `after`, when
     * given, runs in the same transaction once the batch landed as part of the pass in progress, and never for a
     * repeat of a batch that committed (the caller's end of the pass with its last batch). A batch that reached the
     * database finishes or rolls back even when the run is interrupted, the transaction is retried whole on a lost
     * connection, and a repeat of a committed batch (after a lost acknowledgement) changes nothing.
     * Returns the rows inserted or changed (unchanged rows are not rewritten).
     */
    readonly land: <E = never, R = never>(batch: Batch, after?: Effect.Effect<void, E, R>) => Effect.Effect<number, SqlError.SqlError | AccountLockLost | E, R>
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
     * The sweep at the end of a full pass, inside the caller's transaction: the account's live rows whose id is not
     * among `seen` (a subquery of `id`, the ids the pass saw) marked deleted, with their line items and custom fields.
     * Returns how many rows were marked.
     */
    readonly sweep: (accountId: string, stream: AnyStream, seen: Statement.Fragment) => Effect.Effect<number, SqlError.SqlError>
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
    /**
     * As idsLinkedTo, for records of `parent` as a pass just read them (id to updatedAt): only those the warehouse does
     * not hold as read, live with the same or a newer updatedAt. One it holds so was landed before, and the rows
     * linked to it were read again then (an incremental pass reads again the rows its overlap already landed).
     */
    readonly idsLinkedToChanged: (
      accountId: string,
      stream: AnyStream,
      column: string,
      parent: AnyStream,
      asRead: ReadonlyMap<string, string | null>
    ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
  }
>() {}

/** Line items not proven gone (their parent counts more than it returned), kept live: logged and counted. */
const lineItemsKept = (batch: Batch, kept: number) =>
  Effect.zipRight(
    Effect.logWarning(`${batch.stream.name}: line items not proven gone, kept live: ${kept} (their parent did not return them while the service counts more of its line items: withheld from this app, or gone)`),
    Metric.incrementBy(Metrics.forAccount(Metrics.lineItemsKept, batch.accountId), kept)
  )

export const WarehouseLive = Layer.effect(
  Warehouse,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements

    const runPage = SqlSchema.single({
      Request: Schema.Any,
      Result: PageLanded,
      execute: ({ values, then }: { readonly values: PageValues; readonly then: ReadonlyArray<LandingStep> }) => {
        const steps = then.length === 0 ? pageSteps(values.stream) : [...pageSteps(values.stream), ...then]
        const [text, params] = pageStatement(sql, steps, values).compile()
        return sql.unsafe(prepared.keep(text), params)
      }
    })

    const land = <E = never, R = never>(batch: Batch, after?: Effect.Effect<void, E, R>) => Effect.flatMap(heldLease(batch.accountId), (lease) => {
      const values: PageValues = {
        accountId: batch.accountId,
        stream: batch.stream,
        page: pageJson(batch.stream, batch.pages),
        pass: batch.pass,
        recordSeen: batch.recordSeen ?? batch.pass?.kind === "full",
        fetchedAt: batch.fetchedAt,
        lease
      }
      const page = Effect.flatMap(rowsOrDie(runPage({ values, then: batch.then ?? [] })), (landed) =>
        landed.held ? Effect.succeed(landed) : Effect.fail(new AccountLockLost({ accountId: batch.accountId, stream: batch.stream.name }))
      )
      // `open`: the pass was in progress, so this is not a repeat of a batch that committed
      const landing = after === undefined ? page : sql.withTransaction(Effect.tap(page, (landed) => (landed.open ? after : Effect.void)))
      return landing.pipe(
        Effect.tap((landed) => (landed.open && landed.kept > 0 ? lineItemsKept(batch, landed.kept) : Effect.void)),
        Effect.map((landed) => (landed.open ? landed.written : 0)),
        Effect.uninterruptible,
        retryOnConnectionLoss,
        Effect.ensuring(Effect.sync(() => releaseBytes(values.page.containers)))
      )
    }).pipe(runSpan("Warehouse.land", { accountId: batch.accountId, stream: batch.stream.name, rows: rowsIn(batch.pages) }))

    const sweep = (accountId: string, stream: AnyStream, seen: Statement.Fragment) =>
      Effect.gen(function* () {
        yield* sql.unsafe(sweepPlannerSettings)
        const swept = yield* sweepStatement(sql, stream, accountId, seen)
        if (swept.length > 0) for (const statement of dependentSweepStatements(sql, stream, accountId)) yield* statement
        return swept.length
      })

    const markDeleted = (accountId: string, stream: AnyStream, ids: ReadonlyArray<string>, at: Date) =>
      leasedTransaction(
        sql,
        accountId,
        stream.name,
        Effect.gen(function* () {
          const { parents, dependents } = markDeletedStatements(sql, stream, accountId, ids, at)
          const marked = yield* parents
          for (const statement of dependents) yield* statement
          return marked.map((r) => r.id)
        })
      )

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
    /** A dependency names a link column of its stream: else a definition error (not the data's), as a defect. */
    const missingLinkColumn = (stream: AnyStream, column: string) =>
      stream.columns.some((c) => c.column === column && c.link !== undefined) ? undefined : Effect.dieMessage(`stream ${stream.name} has no link column ${column}`)
    const idsLinkedTo = (accountId: string, stream: AnyStream, column: string, ids: ReadonlyArray<string>) => {
      const missing = missingLinkColumn(stream, column)
      if (missing !== undefined) return missing
      if (ids.length === 0) return Effect.succeed([])
      return Effect.map(rowsOrDie(linkedRows({ accountId, table: stream.table, column, ids })), (rows) => rows.map((r) => r.id)).pipe(retryOnConnectionLoss)
    }

    const linkedRowsOfChanged = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        table: Schema.String,
        column: Schema.String,
        parentTable: Schema.String,
        ids: Schema.Array(Schema.String),
        updatedAt: Schema.Array(Schema.NullOr(Schema.String))
      }),
      Result: IdRow,
      execute: ({ accountId, table, column, parentTable, ids, updatedAt }) => sql`
        SELECT d.id FROM ${sql(table)} d
        JOIN unnest(${ids}::text[], ${updatedAt}::timestamptz[]) AS c(id, at) ON d.${sql(column)} = c.id
        LEFT JOIN ${sql(parentTable)} p ON p.account_id = d.account_id AND p.id = c.id AND p.deleted_at IS NULL AND p.updated_at >= c.at
        WHERE d.account_id = ${accountId} AND d.deleted_at IS NULL AND p.id IS NULL
        ORDER BY d.id`
    })
    const idsLinkedToChanged = (accountId: string, stream: AnyStream, column: string, parent: AnyStream, asRead: ReadonlyMap<string, string | null>) => {
      const missing = missingLinkColumn(stream, column)
      if (missing !== undefined) return missing
      if (!parent.columns.some((c) => c.column === "updated_at" && c.selected)) return idsLinkedTo(accountId, stream, column, [...asRead.keys()])
      if (asRead.size === 0) return Effect.succeed([])
      const request = { accountId, table: stream.table, column, parentTable: parent.table, ids: [...asRead.keys()], updatedAt: [...asRead.values()] }
      return Effect.map(rowsOrDie(linkedRowsOfChanged(request)), (rows) => rows.map((r) => r.id)).pipe(retryOnConnectionLoss)
    }

    return Warehouse.of({ land, sweep, markDeleted, storedColumn, idsLinkedTo, idsLinkedToChanged })
  })
)

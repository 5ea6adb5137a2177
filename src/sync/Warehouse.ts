import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryOnConnectionLoss } from "./connectionRetry.js"
import { sanitizeJson, sanitizeText } from "./sanitize.js"
import type { AnyStream, ColumnType } from "./streams/StreamDefinition.js"

export type PassKind = "full" | "incremental"

export interface Checkpoint {
  readonly passKind: PassKind | null
  readonly cursor: string | null
  readonly passStartedAt: Date | null
  readonly highWaterMark: Date | null
  readonly lastFullPassAt: Date | null
}

/** One node as decoded, and the JSON it was decoded from (kept whole in `raw`). */
export interface LandedNode {
  readonly node: { readonly id: string } & Record<string, unknown>
  readonly raw: unknown
}

export interface PageToLand {
  readonly accountId: string
  readonly stream: AnyStream
  readonly kind: PassKind
  readonly nodes: ReadonlyArray<LandedNode>
  /** The page's endCursor; null (empty page) keeps the stored one. */
  readonly endCursor: string | null
  /** Last page of the pass: a full pass sweeps deletions; an incremental pass moves the high-water mark. */
  readonly finishesPass: boolean
  /** Newest updatedAt of the page (full pass) or of the whole pass so far (incremental), service time. */
  readonly highWaterMark: string | null
}

export interface LandResult {
  /** Rows inserted or changed (unchanged rows are not rewritten). */
  readonly written: number
  /** Rows marked deleted by the end-of-pass sweep. */
  readonly deleted: number
}

const CheckpointRow = Schema.Struct({
  pass_kind: Schema.NullOr(Schema.Literal("full", "incremental")),
  cursor: Schema.NullOr(Schema.String),
  pass_started_at: Schema.NullOr(Schema.DateFromSelf),
  high_water_mark: Schema.NullOr(Schema.DateFromSelf),
  last_full_pass_at: Schema.NullOr(Schema.DateFromSelf)
})
const decodeCheckpointRows = Schema.decodeUnknown(Schema.Array(CheckpointRow))

export interface WarehouseShape {
  readonly checkpoint: (accountId: string, stream: string) => Effect.Effect<Option.Option<Checkpoint>, SqlError.SqlError>
  /**
   * Starts (or, for a full pass in progress and no `restart`, resumes) a pass; returns the cursor to page from.
   * Starting a full pass forgets the ids the previous unfinished one had seen.
   */
  readonly beginPass: (
    accountId: string,
    stream: string,
    kind: PassKind,
    options?: { readonly restart?: boolean }
  ) => Effect.Effect<{ readonly cursor: string | null; readonly resumed: boolean; readonly checkpoint: Checkpoint }, SqlError.SqlError>
  /** One transaction: the page's rows, the ids seen (full pass), the checkpoint; and at the pass end, its finish. */
  readonly landPage: (page: PageToLand) => Effect.Effect<LandResult, SqlError.SqlError>
}

export class Warehouse extends Context.Tag("account-sync/Warehouse")<Warehouse, WarehouseShape>() {}

const arrayType: Record<ColumnType, string> = {
  text: "text[]",
  integer: "integer[]",
  "double precision": "double precision[]",
  boolean: "boolean[]",
  timestamptz: "timestamptz[]"
}

/** `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE ... WHERE changed`, built once per stream. */
const upsertStatement = (stream: AnyStream) => {
  const cols = stream.columns.map((c) => c.column)
  const unnestArgs = [
    "$2::text[]",
    ...stream.columns.map((c, i) => `$${i + 3}::${arrayType[c.type]}`),
    `$${stream.columns.length + 3}::jsonb[]`
  ]
  const pageCols = ["id", ...cols, "raw"]
  const t = stream.table
  return `
    INSERT INTO ${t} AS t (account_id, ${pageCols.join(", ")})
    SELECT $1, ${pageCols.map((c) => `p.${c}`).join(", ")}
    FROM unnest(${unnestArgs.join(", ")}) AS p(${pageCols.join(", ")})
    ON CONFLICT (account_id, id) DO UPDATE SET
      ${[...cols, "raw"].map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL
    WHERE (${[...cols, "raw"].map((c) => `t.${c}`).join(", ")}, t.deleted_at)
      IS DISTINCT FROM (${[...cols, "raw"].map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)
    RETURNING t.id`
}

/**
 * The end-of-full-pass sweep: live rows of the account the pass did not see. An anti-join on the primary key of
 * sync_pass_seen ($1 account, $2 stream).
 */
export const sweepStatement = (stream: AnyStream) => `
  UPDATE ${stream.table} AS t SET deleted_at = now()
  WHERE t.account_id = $1 AND t.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM sync_pass_seen s WHERE s.account_id = t.account_id AND s.stream = $2 AND s.id = t.id)
  RETURNING t.id`

/**
 * For the rest of the sweep's transaction. Without statistics (a first backfill outruns auto-analyze, or
 * autovacuum is off) Postgres estimates a handful of rows on each side and plans the anti-join as a nested loop
 * over a rescanned sync_pass_seen: quadratic, minutes for 200,000 rows. Without nested loops it is a hash or merge
 * anti-join, linear whatever the statistics say. (Not ANALYZE in the transaction: its lock would serialize the
 * accounts' sweeps.)
 */
export const sweepPlannerSettings = "SET LOCAL enable_nestloop = off"

const columnValue = (type: ColumnType, value: unknown): unknown =>
  value === undefined || value === null ? null : type === "text" && typeof value === "string" ? sanitizeText(value) : value

export const makeWarehouse = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const statements = new Map<string, string>()
  const upsertFor = (stream: AnyStream) => {
    let s = statements.get(stream.name)
    if (s === undefined) statements.set(stream.name, (s = upsertStatement(stream)))
    return s
  }

  const readCheckpoint: WarehouseShape["checkpoint"] = (accountId, stream) =>
    sql`SELECT pass_kind, cursor, pass_started_at, high_water_mark, last_full_pass_at
        FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream}`.pipe(
      // a row that does not decode is a defect; a lost connection stays a SqlError (retried by callers)
      Effect.flatMap((rows) => Effect.orDie(decodeCheckpointRows(rows))),
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (r) => ({
          passKind: r.pass_kind,
          cursor: r.cursor,
          passStartedAt: r.pass_started_at,
          highWaterMark: r.high_water_mark,
          lastFullPassAt: r.last_full_pass_at
        }))
      )
    )

  const checkpoint: WarehouseShape["checkpoint"] = (accountId, stream) => retryOnConnectionLoss(readCheckpoint(accountId, stream))

  // retried whole: a repeat after a lost COMMIT acknowledgement finds the pass it had started (a full one resumes)
  const beginPass: WarehouseShape["beginPass"] = (accountId, stream, kind, options) =>
    retryOnConnectionLoss(sql.withTransaction(
      Effect.gen(function* () {
        const current = yield* readCheckpoint(accountId, stream)
        if (kind === "full" && !options?.restart && Option.isSome(current) && current.value.passKind === "full") {
          return { cursor: current.value.cursor, resumed: true, checkpoint: current.value }
        }
        if (kind === "full") yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`
        yield* sql`
          INSERT INTO sync_checkpoints (account_id, stream, pass_kind, cursor, pass_started_at, updated_at)
          VALUES (${accountId}, ${stream}, ${kind}, NULL, now(), now())
          ON CONFLICT (account_id, stream) DO UPDATE SET
            pass_kind = EXCLUDED.pass_kind, cursor = NULL, pass_started_at = now(), updated_at = now()`
        const started = yield* readCheckpoint(accountId, stream)
        return { cursor: null, resumed: false, checkpoint: Option.getOrThrow(started) }
      })
    ))

  const landPage: WarehouseShape["landPage"] = (page) => {
    const { accountId, stream, kind } = page
    const unique = [...new Map(page.nodes.map((n) => [n.node.id, n] as const)).values()]
    return sql
      .withTransaction(
        Effect.gen(function* () {
          // The checkpoint row, locked for the transaction. A page of a pass that is no longer in progress is a
          // retry of a page whose COMMIT went through but whose acknowledgement was lost with the connection:
          // it landed already, and landing the last page twice would sweep again against an emptied seen set.
          const open = yield* sql<{ pass_kind: string | null }>`
            SELECT pass_kind FROM sync_checkpoints WHERE account_id = ${accountId} AND stream = ${stream.name} FOR UPDATE`
          if (open[0]?.pass_kind !== kind) return { written: 0, deleted: 0 }
          let written = 0
          if (unique.length > 0) {
            const params: Array<unknown> = [
              accountId,
              unique.map((n) => n.node.id),
              ...stream.columns.map((c) => unique.map((n) => columnValue(c.type, n.node[c.field]))),
              unique.map((n) => JSON.stringify(sanitizeJson(n.raw)))
            ]
            written = (yield* sql.unsafe(upsertFor(stream), params)).length
            if (kind === "full") {
              yield* sql.unsafe(
                `INSERT INTO sync_pass_seen (account_id, stream, id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
                [accountId, stream.name, unique.map((n) => n.node.id)]
              )
            }
          }
          // A full pass pages by JOB_NUMBER, so rows behind its cursor edited while it runs (or between an
          // interruption and its resumption) are not seen by it; the newest updatedAt it saw can be later than those
          // edits. Capping the mark at the pass's start keeps them in reach of the next incremental pass.
          // pass_started_at is our database's clock, updatedAt the service's: the incremental overlap (minutes)
          // absorbs the skew between the two.
          yield* sql`
            UPDATE sync_checkpoints SET
              cursor = COALESCE(${page.endCursor}, cursor),
              high_water_mark = ${
                kind === "full"
                  ? sql`LEAST(GREATEST(high_water_mark, ${page.highWaterMark}::timestamptz), pass_started_at)`
                  : sql`high_water_mark`
              },
              updated_at = now()
            WHERE account_id = ${accountId} AND stream = ${stream.name}`
          let deleted = 0
          if (page.finishesPass && kind === "full") {
            yield* sql.unsafe(sweepPlannerSettings)
            const swept = yield* sql.unsafe<{ id: string }>(sweepStatement(stream), [accountId, stream.name])
            deleted = swept.length
            yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream.name}`
            yield* sql`
              UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL, last_full_pass_at = pass_started_at, updated_at = now()
              WHERE account_id = ${accountId} AND stream = ${stream.name}`
          } else if (page.finishesPass) {
            yield* sql`
              UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL,
                high_water_mark = GREATEST(high_water_mark, ${page.highWaterMark}::timestamptz), updated_at = now()
              WHERE account_id = ${accountId} AND stream = ${stream.name}`
          }
          return { written, deleted }
        })
      )
      .pipe(
        // a page that reached the database finishes (or rolls back) even when the run is being interrupted
        Effect.uninterruptible,
        // the transaction committed whole or not at all, and a repeat of a committed one changes nothing
        retryOnConnectionLoss,
        Effect.withSpan("Warehouse.landPage", { attributes: { accountId, stream: stream.name, rows: unique.length } })
      )
  }

  return Warehouse.of({ checkpoint, beginPass, landPage })
})

export const WarehouseLive = Layer.effect(Warehouse, makeWarehouse)

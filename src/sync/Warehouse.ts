import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryOnConnectionLoss } from "../db/connectionRetry.js"
import { keepPrepared } from "../db/preparedStatements.js"
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
  /**
   * The response bodies `nodes` were read from, in order (each holds its nodes at `data`, the stream's connection
   * path, `nodes`). When every node is landed as received, Postgres takes the rows from these texts: the nodes are
   * not serialized again. Without them (or when a node was changed by its decoder) the nodes are serialized.
   */
  readonly bodies?: ReadonlyArray<string>
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
   * Starting a full pass forgets the ids the previous unfinished one had seen; it records the ids it sees only when
   * the account has live rows in the stream's table (otherwise its end has nothing to sweep).
   */
  readonly beginPass: (
    accountId: string,
    stream: AnyStream,
    kind: PassKind,
    options?: { readonly restart?: boolean }
  ) => Effect.Effect<{ readonly cursor: string | null; readonly resumed: boolean; readonly checkpoint: Checkpoint }, SqlError.SqlError>
  /** One transaction: the page's rows, the ids seen (full pass), the checkpoint; and at the pass end, its finish. */
  readonly landPage: (page: PageToLand) => Effect.Effect<LandResult, SqlError.SqlError>
}

export class Warehouse extends Context.Tag("account-sync/Warehouse")<Warehouse, WarehouseShape>() {}

/**
 * One statement lands a page: the checkpoint of the pass in progress moves to the page's cursor, the page's rows are
 * upserted (unchanged rows are not rewritten) and, when the pass records them, their ids go to sync_pass_seen. One
 * statement is one transaction: the rows and their cursor commit together, with one round trip.
 * - The checkpoint UPDATE matches only while a pass of this kind is in progress, and everything else depends on it:
 *   a page of a pass that ended is a retry of a page whose COMMIT went through but whose acknowledgement was lost
 *   with the connection; it landed already (`open` is false), and landing a last page twice would sweep again.
 * - The page travels as one JSON parameter ($2): an array of containers, the nodes at path $8 in each (the response
 *   bodies as received, path data.<connection>.nodes; or one array of the nodes serialized by us, path empty).
 *   Postgres takes the columns out of each node (`jsonb_to_record`, named as the service names the fields) and
 *   keeps the node whole as `raw`: no per-value escaping on our side. $3, when not null, is the nodes again with
 *   `raw`'s own spelling of unstorable characters (see sanitize.ts); element i of $3 is the raw of node i of $2
 *   (then $2 is one container).
 * - A full pass pages by JOB_NUMBER, so rows behind its cursor edited while it runs (or between an interruption and
 *   its resumption) are not seen by it; the newest updatedAt it saw can be later than those edits. Capping the mark
 *   at the pass's start keeps them in reach of the next incremental pass. pass_started_at is our database's clock,
 *   updatedAt the service's: the incremental overlap (minutes) absorbs the skew. An incremental pass moves its mark
 *   only when it ends.
 * Parameters: $1 account, $2 page, $3 raw page or null, $4 stream, $5 pass kind, $6 end cursor or null, $7 the
 * page's high-water mark or null, $8 the path of the nodes in each container of $2.
 */
const pageStatement = (stream: AnyStream) => {
  const cols = stream.columns.map((c) => c.column)
  const pageCols = ["id", ...cols, "raw"]
  const record = ["id text", ...stream.columns.map((c) => `"${c.field}" ${c.type}`)].join(", ")
  return `
    WITH pass AS (
      UPDATE sync_checkpoints SET
        cursor = COALESCE($6, cursor),
        high_water_mark = CASE WHEN $5 = 'full'
          THEN LEAST(GREATEST(high_water_mark, $7::timestamptz), pass_started_at) ELSE high_water_mark END,
        updated_at = now()
      WHERE account_id = $1 AND stream = $4 AND pass_kind = $5
      RETURNING tracks_seen
    ), page AS (
      SELECT e.node, e.i FROM jsonb_array_elements($2::jsonb) AS c(container)
      CROSS JOIN LATERAL jsonb_array_elements(c.container #> $8::text[]) WITH ORDINALITY AS e(node, i)
    ), landed AS (
      INSERT INTO ${stream.table} AS t (account_id, ${pageCols.join(", ")})
      SELECT $1, r.id, ${stream.columns.map((c) => `r."${c.field}"`).join(", ")}, COALESCE($3::jsonb -> (e.i - 1)::int, e.node)
      FROM page AS e
      CROSS JOIN LATERAL jsonb_to_record(e.node) AS r(${record})
      WHERE EXISTS (SELECT 1 FROM pass)
      ON CONFLICT (account_id, id) DO UPDATE SET
        ${[...cols, "raw"].map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL
      WHERE (${[...cols, "raw"].map((c) => `t.${c}`).join(", ")}, t.deleted_at)
        IS DISTINCT FROM (${[...cols, "raw"].map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)
      RETURNING t.id
    ), seen AS (
      INSERT INTO sync_pass_seen (account_id, stream, id)
      SELECT $1, $4, node ->> 'id' FROM page
      WHERE $5 = 'full' AND (SELECT tracks_seen FROM pass)
      ON CONFLICT DO NOTHING
    )
    SELECT EXISTS (SELECT 1 FROM pass) AS open, (SELECT tracks_seen FROM pass) AS tracks_seen,
      (SELECT count(*) FROM landed)::int AS written`
}

const columnValue = (type: ColumnType, value: unknown): unknown =>
  value === undefined || value === null ? null : type === "text" && typeof value === "string" ? sanitizeText(value) : value

/**
 * The page's parameters ($2, $3, $8): the response bodies when every node is landed as received, once each, and no
 * body has an escape Postgres refuses; otherwise the nodes as one JSON array and, only when some string cannot be
 * stored as sent, the raw nodes spelled for `raw`. JSON escapes exactly the characters Postgres refuses (NUL, lone
 * surrogates) as `\u0000` / `\udXXX`, so JSON without such an escape is stored as sent; a page that has one (or
 * only seems to) is sanitized node by node.
 */
const mayBeUnstorable = /\\u0000|\\ud[89a-f]/i

const pageParams = (
  stream: AnyStream,
  nodes: ReadonlyArray<LandedNode>,
  bodies: ReadonlyArray<string> | undefined
): readonly [string, string | null, ReadonlyArray<string>] => {
  const sent = nodes.every((n) => n.node === n.raw)
  if (sent && bodies !== undefined && !bodies.some((body) => mayBeUnstorable.test(body))) {
    return [`[${bodies.join(",")}]`, null, ["data", ...stream.connectionPath, "nodes"]]
  }
  if (sent) {
    const json = JSON.stringify(nodes.map((n) => n.raw))
    if (!mayBeUnstorable.test(json)) return [`[${json}]`, null, []]
  }
  const columns = nodes.map((n) => {
    const out: Record<string, unknown> = { id: n.node.id }
    for (const c of stream.columns) out[c.field] = columnValue(c.type, n.node[c.field])
    return out
  })
  return [`[${JSON.stringify(columns)}]`, JSON.stringify(nodes.map((n) => sanitizeJson(n.raw))), []]
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

export const makeWarehouse = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const statements = new Map<string, string>()
  const pageStatementFor = (stream: AnyStream) => {
    let s = statements.get(stream.name)
    if (s === undefined) statements.set(stream.name, (s = keepPrepared(pageStatement(stream))))
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
  const beginPass: WarehouseShape["beginPass"] = (accountId, { name: stream, table }, kind, options) =>
    retryOnConnectionLoss(sql.withTransaction(
      Effect.gen(function* () {
        const current = yield* readCheckpoint(accountId, stream)
        if (kind === "full" && !options?.restart && Option.isSome(current) && current.value.passKind === "full") {
          return { cursor: current.value.cursor, resumed: true, checkpoint: current.value }
        }
        if (kind === "full") yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`
        const tracksSeen = kind === "full"
          ? sql`EXISTS (SELECT 1 FROM ${sql(table)} WHERE account_id = ${accountId} AND deleted_at IS NULL)`
          : sql`false`
        yield* sql`
          INSERT INTO sync_checkpoints (account_id, stream, pass_kind, cursor, pass_started_at, tracks_seen, updated_at)
          VALUES (${accountId}, ${stream}, ${kind}, NULL, now(), ${tracksSeen}, now())
          ON CONFLICT (account_id, stream) DO UPDATE SET
            pass_kind = EXCLUDED.pass_kind, cursor = NULL, pass_started_at = now(), tracks_seen = EXCLUDED.tracks_seen,
            updated_at = now()`
        const started = yield* readCheckpoint(accountId, stream)
        return { cursor: null, resumed: false, checkpoint: Option.getOrThrow(started) }
      })
    ))

  const landRows = (page: PageToLand, nodes: ReadonlyArray<LandedNode>, bodies: ReadonlyArray<string> | undefined) => {
    const [json, raw, path] = pageParams(page.stream, nodes, bodies)
    return Effect.map(
      sql.unsafe<{ open: boolean; tracks_seen: boolean | null; written: number }>(pageStatementFor(page.stream), [
        page.accountId,
        json,
        raw,
        page.stream.name,
        page.kind,
        page.endCursor,
        page.highWaterMark,
        `{${path.map((key) => `"${key.replace(/["\\]/g, "\\$&")}"`).join(",")}}`
      ]),
      (rows) => rows[0]!
    )
  }

  /** The pass's end, in the transaction of its last page: the sweep (full pass) or the mark (incremental). */
  const finishPass = (page: PageToLand, tracksSeen: boolean) =>
    Effect.gen(function* () {
      const { accountId, stream } = page
      if (page.kind === "incremental") {
        yield* sql`
          UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL,
            high_water_mark = GREATEST(high_water_mark, ${page.highWaterMark}::timestamptz), updated_at = now()
          WHERE account_id = ${accountId} AND stream = ${stream.name}`
        return 0
      }
      let deleted = 0
      if (tracksSeen) {
        yield* sql.unsafe(sweepPlannerSettings)
        deleted = (yield* sql.unsafe<{ id: string }>(sweepStatement(stream), [accountId, stream.name])).length
        yield* sql`DELETE FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream.name}`
      }
      yield* sql`
        UPDATE sync_checkpoints SET pass_kind = NULL, cursor = NULL, last_full_pass_at = pass_started_at, updated_at = now()
        WHERE account_id = ${accountId} AND stream = ${stream.name}`
      return deleted
    })

  const landPage: WarehouseShape["landPage"] = (page) => {
    // one row per id: an upsert cannot change the same row twice in one statement
    const unique = [...new Map(page.nodes.map((n) => [n.node.id, n] as const)).values()]
    // the bodies hold every node as received: usable only when no id repeats
    const bodies = unique.length === page.nodes.length ? page.bodies : undefined
    const landing = page.finishesPass
      ? sql.withTransaction(
          Effect.gen(function* () {
            const landed = yield* landRows(page, unique, bodies)
            if (!landed.open) return { written: 0, deleted: 0 }
            return { written: landed.written, deleted: yield* finishPass(page, landed.tracks_seen === true) }
          })
        )
      : Effect.map(landRows(page, unique, bodies), (landed) => ({ written: landed.written, deleted: 0 }))
    return landing.pipe(
      // a page that reached the database finishes (or rolls back) even when the run is being interrupted
      Effect.uninterruptible,
      // the page committed whole or not at all, and a repeat of a committed one changes nothing
      retryOnConnectionLoss,
      Effect.withSpan("Warehouse.landPage", { attributes: { accountId: page.accountId, stream: page.stream.name, rows: unique.length } })
    )
  }

  return Warehouse.of({ checkpoint, beginPass, landPage })
})

export const WarehouseLive = Layer.effect(Warehouse, makeWarehouse)

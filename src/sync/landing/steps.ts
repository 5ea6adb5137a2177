import type { SqlClient, Statement } from "@effect/sql"
import type { PassKind } from "../model.js"
import type { AnyStream, Column } from "../streams/Stream.js"
import type { PageJson } from "./pageParams.js"

/** Where a batch's pass stands once it lands. */
export interface PassProgress {
  readonly kind: PassKind
  /** The partition of the stream's list, the rows of it landed, and the ids of the last page (the next joins on them). */
  readonly partition: number
  readonly position: number
  readonly anchors: ReadonlyArray<string>
  /** A page of the batch did not join where it would have, had nothing moved. */
  readonly shifted: boolean
  /** The batch's high-water mark (see PassPlan.batchHighWater), service time. */
  readonly highWaterMark: string | null
}

/** Everything one page statement lands: the values its steps take as parameters. */
export interface PageValues {
  readonly accountId: string
  readonly stream: AnyStream
  readonly page: PageJson
  /** The pass the rows belong to; undefined: rows read outside a pass (a re-read before a sweep, a change event). */
  readonly pass: PassProgress | undefined
  /** Whether the ids go to the pass's seen ids (a full pass, and rows re-read before its sweep). */
  readonly recordSeen: boolean
}

/**
 * One named step of the page statement: a data-modifying CTE `name AS (sql)`. Steps may read the CTEs before them
 * (`pass`, `page`, ...); everything runs in the one statement, so in one transaction and one round trip.
 */
export interface LandingStep {
  readonly name: string
  readonly sql: (sql: SqlClient.SqlClient, values: PageValues) => Statement.Fragment
}

/**
 * `pass`: the checkpoint of the pass in progress moves to the batch's position and anchors (and, in a full pass, the
 * mark to the batch's newest updatedAt, never past the pass's start). It matches only while a pass of this kind is in
 * progress, and every other step depends on it: a page of a pass that ended is a retry of a page whose COMMIT went
 * through but whose acknowledgement was lost; it landed already. Rows landed outside a pass always land; `pass` then
 * says whether the stream's pass in progress records seen ids.
 */
export const checkpointStep: LandingStep = {
  name: "pass",
  sql: (sql, v) =>
    v.pass === undefined
      ? sql`SELECT tracks_seen FROM sync_checkpoints WHERE account_id = ${v.accountId} AND stream = ${v.stream.name}
          UNION ALL SELECT false WHERE NOT EXISTS (SELECT 1 FROM sync_checkpoints WHERE account_id = ${v.accountId} AND stream = ${v.stream.name})`
      : sql`
    UPDATE sync_checkpoints SET
      partition = ${v.pass.partition},
      position = ${v.pass.position},
      anchors = ${JSON.stringify(v.pass.anchors)}::jsonb,
      shifted = shifted OR ${v.pass.shifted},
      high_water_mark = CASE WHEN ${v.pass.kind} = 'full'
        THEN LEAST(GREATEST(high_water_mark, ${v.pass.highWaterMark}::timestamptz), pass_started_at) ELSE high_water_mark END,
      updated_at = now()
    WHERE account_id = ${v.accountId} AND stream = ${v.stream.name} AND pass_kind = ${v.pass.kind}
    RETURNING tracks_seen`
}

/** `page`: the batch's nodes, numbered, out of the containers (response bodies as received, or our JSON). */
export const nodesStep: LandingStep = {
  name: "page",
  sql: (sql, v) => sql`
    SELECT e.node, e.i FROM jsonb_array_elements(${v.page.containers}::jsonb) AS c(container)
    CROSS JOIN LATERAL jsonb_array_elements(c.container #> ${v.page.nodesPath}::text[]) WITH ORDINALITY AS e(node, i)`
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`

/** How a column's value is read from `r` (the node through jsonb_to_record): top-level by name, nested by path. */
const extract = (c: Column): string => {
  const [head, ...rest] = c.path
  if (rest.length === 0) return `r.${quoted(head!)}`
  const text = `(r.${quoted(head!)} #>> '{${rest.join(",")}}')`
  return c.type === "jsonb" ? `(r.${quoted(head!)} #> '{${rest.join(",")}}')` : c.type === "text" ? text : `${text}::${c.type}`
}

/** The record definition of jsonb_to_record: top-level fields with their type, or jsonb when columns read inside them. */
const recordDefinition = (stream: AnyStream): string => {
  const top = new Map<string, string>([["id", "text"]])
  for (const c of stream.columns) {
    const head = c.path[0]!
    top.set(head, c.path.length === 1 ? c.type : "jsonb")
  }
  return [...top].map(([field, type]) => `${quoted(field)} ${type}`).join(", ")
}

const upsertTexts = new WeakMap<AnyStream, { readonly insert: string; readonly select: string; readonly conflict: string }>()
const upsertText = (stream: AnyStream) => {
  let t = upsertTexts.get(stream)
  if (t === undefined) {
    const cols = [...stream.columns.map((c) => c.column), "raw"]
    t = {
      insert: `INSERT INTO ${stream.table} AS t (account_id, id, ${cols.join(", ")})`,
      select: `r.id, ${stream.columns.map(extract).join(", ")}`,
      conflict: `FROM page AS e CROSS JOIN LATERAL jsonb_to_record(e.node) AS r(${recordDefinition(stream)})
      WHERE EXISTS (SELECT 1 FROM pass)
      ON CONFLICT (account_id, id) DO UPDATE SET
        ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL
      WHERE (${cols.map((c) => `t.${c}`).join(", ")}, t.deleted_at)
        IS DISTINCT FROM (${cols.map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)
      RETURNING t.id`
    }
    upsertTexts.set(stream, t)
  }
  return t
}

/**
 * `landed`: the nodes upserted into the stream's table, each column taken out of the node by Postgres (named as the
 * service names the fields) and the node kept whole as `raw` (or, when a string had to be changed, the raw spelled
 * for storage); unchanged rows are not rewritten.
 */
export const upsertStep: LandingStep = {
  name: "landed",
  sql: (sql, v) => {
    const t = upsertText(v.stream)
    return sql`${sql.literal(t.insert)}
      SELECT ${v.accountId}, ${sql.literal(t.select)}, COALESCE(${v.page.raws}::jsonb -> (e.i - 1)::int, e.node)
      ${sql.literal(t.conflict)}`
  }
}

/** `seen`: the ids a full pass saw (or re-read before its sweep), for the sweep (only when the pass records them). */
export const seenStep: LandingStep = {
  name: "seen",
  sql: (sql, v) => sql`
    INSERT INTO sync_pass_seen (account_id, stream, id)
    SELECT ${v.accountId}, ${v.stream.name}, node ->> 'id' FROM page
    WHERE ${v.recordSeen} AND (SELECT tracks_seen FROM pass)
    ON CONFLICT DO NOTHING`
}

/** The steps of a stream's page statement, in order. */
export const pageSteps: ReadonlyArray<LandingStep> = [checkpointStep, nodesStep, upsertStep, seenStep]

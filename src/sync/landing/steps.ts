import type { SqlClient, Statement } from "@effect/sql"
import { leaseHeld } from "../AccountLeases.js"
import { checkpointStep, seenStep } from "../pass/checkpointSteps.js"
import type { AnyStream, ChildDefinition, Column } from "../streams/Stream.js"
import type { LandingStep, PageValues } from "./LandingStep.js"

/**
 * `lease`: whether this run still holds the account (its lease's epoch unchanged, the row key-share locked for the
 * statement), read in the page's own transaction. Nothing is written without it (`pass` depends on it), and the
 * statement reports it.
 */
export const leaseStep: LandingStep = {
  name: "lease",
  sql: (sql, v) => (v.lease === undefined ? sql`SELECT true AS held` : sql`SELECT ${leaseHeld(sql, v.lease)} AS held`)
}

/**
 * `page`: the batch's nodes out of the containers (response bodies as received, or our JSON), numbered by container
 * (`ci`) and within it (`i`). Where pages overlap (they join on rows read again), one node per id: the last read,
 * found by leaving out the reads the batch names as earlier (a hashed set), or where a page repeats an id itself, by
 * sorting (the batch's ids compared in the column's collation: a few hundred comparisons a page).
 */
export const nodesStep: LandingStep = {
  name: "page",
  sql: (sql, v) => {
    const nodes = sql`jsonb_array_elements(${v.page.containers}::jsonb) WITH ORDINALITY AS c(container, ci)
    CROSS JOIN LATERAL jsonb_array_elements(c.container #> ${v.page.nodesPath}::text[]) WITH ORDINALITY AS e(node, i)`
    switch (v.page.repeats) {
      case "none":
        return sql`SELECT e.node, c.ci, e.i FROM ${nodes}`
      case "across":
        return sql`SELECT e.node, c.ci, e.i FROM ${nodes}
    WHERE (c.ci::text || ':' || (e.node ->> 'id') IN (SELECT jsonb_array_elements_text(${JSON.stringify(v.page.earlierReads)}::jsonb))) IS NOT TRUE`
      case "within":
        return sql`SELECT DISTINCT ON (e.node ->> 'id') e.node, c.ci, e.i FROM ${nodes}
    ORDER BY e.node ->> 'id', c.ci DESC, e.i DESC`
    }
  }
}

/** An SQL identifier, quoted. */
export const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`

/** A number written as text (a coordinate some types send as a string): anything else is not cast. */
export const numberText = "^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*$"

/** How a column's value is read from `r` (the node through jsonb_to_record): top-level by name, nested by path. */
const extract = (c: Column): string => {
  if (!c.selected) return `NULL::${c.type}`
  const [head, ...rest] = c.path
  if (rest.length === 0) return `r.${quoted(head!)}`
  const text = `(r.${quoted(head!)} #>> '{${rest.join(",")}}')`
  if (c.type === "jsonb") return `(r.${quoted(head!)} #> '{${rest.join(",")}}')`
  if (c.type === "text") return text
  // a coordinate may come as a string that is no number: null, never a failed page (raw keeps what was sent)
  if (c.type === "double precision") return `(CASE WHEN ${text} ~ '${numberText}' THEN ${text}::double precision END)`
  return `${text}::${c.type}`
}

/** The record definition of jsonb_to_record: top-level fields with their type, or jsonb when columns read inside them. */
const recordDefinition = (columns: ReadonlyArray<Column>): string => {
  const top = new Map<string, string>([["id", "text"]])
  for (const c of columns) {
    if (!c.selected) continue
    const head = c.path[0]!
    top.set(head, c.path.length === 1 ? c.type : "jsonb")
  }
  return [...top].map(([field, type]) => `${quoted(field)} ${type}`).join(", ")
}

/**
 * An upsert of the rows of `source` (a CTE with `node`, the raw `raw` and, for children, `parent_id`) into `table`:
 * each column taken out of the node by Postgres (named as the service names the fields), the node kept whole as
 * `raw`; an unchanged row is not rewritten, a row marked deleted that comes back loses its mark.
 */
const upsertSql = (options: {
  readonly table: string
  readonly columns: ReadonlyArray<Column>
  readonly source: string
  readonly parentColumn?: string
  readonly key: ReadonlyArray<string>
}) => {
  const cols = [...options.columns.map((c) => quoted(c.column)), "raw"]
  const parent = options.parentColumn === undefined ? [] : [quoted(options.parentColumn)]
  const compared = [...parent, ...cols]
  return {
    insert: `INSERT INTO ${options.table} AS t (account_id, id, ${[...parent, ...cols].join(", ")})`,
    select: `r.id, ${[...(options.parentColumn === undefined ? [] : ["e.parent_id"]), ...options.columns.map(extract), "e.raw"].join(", ")}`,
    /** Up to the condition of the update: `WHERE <changed> [AND <more>] RETURNING t.id` follows. */
    rest: `FROM ${options.source} AS e CROSS JOIN LATERAL jsonb_to_record(e.node) AS r(${recordDefinition(options.columns)})
      WHERE EXISTS (SELECT 1 FROM pass)
      ON CONFLICT (${options.key.join(", ")}) DO UPDATE SET
        ${compared.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL`,
    changed: `(${compared.map((c) => `t.${c}`).join(", ")}, t.deleted_at)
        IS DISTINCT FROM (${compared.map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)`
  }
}

/** An upsert whose conflicting rows are updated only when they changed. */
const upsertStatement = (sql: SqlClient.SqlClient, accountId: string, t: ReturnType<typeof upsertSql>, guard?: Statement.Fragment) =>
  sql`${sql.literal(t.insert)} SELECT ${accountId}, ${sql.literal(t.select)} ${sql.literal(t.rest)}
      WHERE ${sql.literal(t.changed)}${guard ?? sql.literal("")}
      RETURNING t.id`

/** Texts that depend on the stream only, built once per stream (the statement's text must not change per page). */
const cached = <A>(build: (stream: AnyStream) => A) => {
  const cache = new WeakMap<AnyStream, A>()
  return (stream: AnyStream): A => {
    let value = cache.get(stream)
    if (value === undefined) cache.set(stream, (value = build(stream)))
    return value
  }
}

const streamUpsert = cached((stream) =>
  upsertSql({ table: stream.table, columns: stream.columns, source: "page_rows", key: ["account_id", "id"] })
)

/**
 * What keeps an older read from overwriting newer data (a pass and the change events land the same rows in any
 * order): a node whose updatedAt is older than the stored row's, or a row marked deleted after the node was fetched,
 * is not landed (nor are its children). `newer` compares the stored row with the node, `newerThanExcluded` with the
 * row the upsert proposes.
 */
const staleGuard = cached((stream) => {
  const updatedAt = stream.columns.find((c) => c.column === "updated_at" && c.selected && c.path.length === 1)
  return {
    table: stream.table,
    stored: updatedAt === undefined ? "k.id, k.deleted_at" : "k.id, k.deleted_at, k.updated_at",
    newer: updatedAt === undefined ? "" : ` OR t.updated_at > (e.node ->> '${updatedAt.path[0]}')::timestamptz`,
    newerThanExcluded: updatedAt === undefined ? "" : " OR t.updated_at > EXCLUDED.updated_at"
  }
})

/**
 * Whether the stale-row guard is the upsert's own condition: when nothing but the stream's own rows lands from the
 * page (no line items, no custom fields, which must not land under a stale parent), the stored row the upsert's
 * conflict check finds anyway is the one the guard compares with, so no lookup of the page's ids goes before it
 * (that lookup, an index descent per id, took a quarter of the backend's time of a page of jobs).
 */
const guardedByUpsert = (stream: AnyStream): boolean => stream.children.length === 0 && stream.customFields === undefined

/**
 * `page_rows`: each node with its raw (as sent, or as spelled for storage when a string had to change), unless stale
 * (where the upsert is not the guard itself, see guardedByUpsert).
 * The stored rows are looked up by key for the page's ids (`= ANY` of them, an index scan): never a plan that reads
 * every row of the account for each page, which the planner chose for `NOT EXISTS` with a generic plan made while the
 * table was small (a page of jobs took 0.3 s once the account had 200,000, and a backfill grew quadratic).
 */
export const rowsStep: LandingStep = {
  name: "page_rows",
  sql: (sql, v) => {
    const raw = sql`COALESCE(${v.page.raws}::jsonb -> (e.ci - 1)::int -> (e.i - 1)::int, e.node)`
    if (guardedByUpsert(v.stream)) return sql`SELECT e.node, ${raw} AS raw, e.i FROM page AS e`
    const guard = staleGuard(v.stream)
    return sql`SELECT e.node, ${raw} AS raw, e.i FROM page AS e
      LEFT JOIN (
        SELECT ${sql.literal(guard.stored)} FROM ${sql.literal(guard.table)} AS k
        WHERE k.account_id = ${v.accountId} AND k.id = ANY (ARRAY(SELECT node ->> 'id' FROM page))
      ) AS t ON t.id = e.node ->> 'id'
      WHERE (t.deleted_at > ${v.fetchedAt?.toISOString() ?? null}::timestamptz${sql.literal(guard.newer)}) IS NOT TRUE`
  }
}

/**
 * `landed`: the nodes upserted into the stream's table, each column taken out of the node by Postgres (named as the
 * service names the fields) and the node kept whole as `raw` (or, when a string had to be changed, the raw spelled
 * for storage); unchanged rows are not rewritten.
 */
export const upsertStep: LandingStep = {
  name: "landed",
  sql: (sql, v) => {
    if (!guardedByUpsert(v.stream)) return upsertStatement(sql, v.accountId, streamUpsert(v.stream))
    const { newerThanExcluded } = staleGuard(v.stream)
    const guard = sql`
        AND (t.deleted_at > ${v.fetchedAt?.toISOString() ?? null}::timestamptz${sql.literal(newerThanExcluded)}) IS NOT TRUE`
    return upsertStatement(sql, v.accountId, streamUpsert(v.stream), guard)
  }
}

/**
 * The steps that replace a child connection's rows (line items) with their parents': the page's children upserted,
 * and the children the landed parents no longer have marked deleted, where the parent's connection proves them gone:
 * it counts no more line items than it returned. Where it counts more (the service withholds some of the parent's
 * line items from the app), a stored line item it did not return may be a withheld one: it is kept live, and counted
 * (`kept`). A parent landed without a count (not from a page) proves them gone as before.
 */
export const childSteps = (child: ChildDefinition): ReadonlyArray<LandingStep> => {
  const rows = `${child.table}_rows`
  const key = child.keyedByParent ? ["account_id", quoted(child.parentColumn), "id"] : ["account_id", "id"]
  const upsert = upsertSql({ table: child.table, columns: child.columns, source: rows, parentColumn: child.parentColumn, key })
  const path = `'{${child.field},nodes}'`
  const parent = quoted(child.parentColumn)
  /** Whether the parent's connection counts no more line items than it returned (null: it has no count). */
  const whole = `(p.node #>> '{${child.field},totalCount}')::int <= jsonb_array_length(COALESCE(p.node #> ${path}, '[]'::jsonb))`
  /** The live line items of the page's parents `parents` (a CTE of `id`) that the page does not bring. */
  const missing = (sql: SqlClient.SqlClient, v: PageValues, parents: string) => sql`
          SELECT k.id, k.${sql.literal(parent)} AS parent FROM ${sql.literal(child.table)} AS k
          WHERE k.account_id = ${v.accountId} AND k.deleted_at IS NULL AND EXISTS (SELECT 1 FROM pass)
            AND k.${sql.literal(parent)} = ANY (ARRAY(SELECT id FROM ${sql.literal(parents)}))
          EXCEPT
          SELECT c.node ->> 'id', c.parent_id FROM ${sql.literal(rows)} AS c`
  return [
    {
      name: rows,
      sql: (sql) =>
        sql.literal(`SELECT p.node ->> 'id' AS parent_id, c.node, COALESCE(p.raw #> ${path} -> (c.i - 1)::int, c.node) AS raw
          FROM page_rows AS p CROSS JOIN LATERAL jsonb_array_elements(COALESCE(p.node #> ${path}, '[]'::jsonb)) WITH ORDINALITY AS c(node, i)
          WHERE EXISTS (SELECT 1 FROM pass)`)
    },
    {
      name: `${child.table}_landed`,
      sql: (sql, v) => upsertStatement(sql, v.accountId, upsert)
    },
    {
      name: `${child.table}_whole`,
      sql: (sql) => sql.literal(`SELECT p.node ->> 'id' AS id FROM page_rows AS p WHERE (${whole}) IS NOT FALSE`)
    },
    {
      name: `${child.table}_counted`,
      sql: (sql) => sql.literal(`SELECT p.node ->> 'id' AS id FROM page_rows AS p WHERE (${whole}) IS FALSE`)
    },
    {
      // the parents' live line items (an index scan for the page's parents, `= ANY` of their ids) less those the page
      // brings (a set difference, hashed or sorted): never a loop over every line item of the account for each of the
      // page's, which the planner chose for `IN (SELECT ...)` and `NOT EXISTS` on tables without statistics (a page
      // of jobs took seconds once the account had a few thousand line items)
      name: `${child.table}_removed`,
      sql: (sql, v) => sql`
        UPDATE ${sql.literal(child.table)} AS t SET deleted_at = now()
        FROM (${missing(sql, v, `${child.table}_whole`)}) AS gone
        WHERE t.account_id = ${v.accountId} AND t.${sql.literal(parent)} = ANY (ARRAY(SELECT id FROM ${sql.literal(`${child.table}_whole`)}))
          AND t.id = gone.id AND t.${sql.literal(parent)} = gone.parent`
    },
    {
      name: `${child.table}_kept`,
      kept: true,
      sql: (sql, v) => missing(sql, v, `${child.table}_counted`)
    }
  ]
}

/** What a custom field's value is, as text and as JSON, whatever its kind. */
const customFieldValue = {
  text: `CASE f.node ->> '__typename'
    WHEN 'CustomFieldArea' THEN concat_ws(' ', (f.node #>> '{valueArea,length}') || ' x ' || (f.node #>> '{valueArea,width}'), f.node ->> 'unit')
    WHEN 'CustomFieldBoolean' THEN f.node ->> 'valueBoolean'
    WHEN 'CustomFieldLink' THEN f.node ->> 'valueUrl'
    WHEN 'CustomFieldNumber' THEN f.node ->> 'valueNumber'
    WHEN 'CustomFieldSelect' THEN f.node ->> 'valueSelect'
    ELSE f.node ->> 'valueText' END`,
  json: `CASE f.node ->> '__typename'
    WHEN 'CustomFieldArea' THEN f.node -> 'valueArea'
    WHEN 'CustomFieldBoolean' THEN f.node -> 'valueBoolean'
    WHEN 'CustomFieldLink' THEN jsonb_build_object('text', f.node -> 'valueText', 'url', f.node -> 'valueUrl')
    WHEN 'CustomFieldNumber' THEN f.node -> 'valueNumber'
    WHEN 'CustomFieldSelect' THEN f.node -> 'valueSelect'
    ELSE f.node -> 'valueText' END`
}

/** The steps that replace a parent's custom fields with its own (one table for every parent type). */
export const customFieldSteps = (parentType: string): ReadonlyArray<LandingStep> => [
  {
    name: "custom_field_rows",
    sql: (sql) =>
      sql.literal(`SELECT DISTINCT ON (p.node ->> 'id', COALESCE(f.node ->> 'id', f.node ->> 'label'))
          p.node ->> 'id' AS parent_id, COALESCE(f.node ->> 'id', f.node ->> 'label') AS field_key, f.node,
          COALESCE(p.raw -> 'customFields' -> (f.i - 1)::int, f.node) AS raw
        FROM page_rows AS p CROSS JOIN LATERAL jsonb_array_elements(COALESCE(p.node -> 'customFields', '[]'::jsonb)) WITH ORDINALITY AS f(node, i)
        WHERE EXISTS (SELECT 1 FROM pass)
        ORDER BY p.node ->> 'id', COALESCE(f.node ->> 'id', f.node ->> 'label'), f.i DESC`)
  },
  {
    name: "custom_fields_landed",
    sql: (sql, v) => sql`
      INSERT INTO custom_fields AS t (account_id, parent_type, parent_id, field_key, field_id, label, kind, unit, value_text, value, raw)
      SELECT ${v.accountId}, ${parentType}, f.parent_id, f.field_key, f.node ->> 'id', f.node ->> 'label', f.node ->> '__typename',
        f.node ->> 'unit', ${sql.literal(customFieldValue.text)}, ${sql.literal(customFieldValue.json)}, f.raw
      FROM custom_field_rows AS f
      ON CONFLICT (account_id, parent_type, parent_id, field_key) DO UPDATE SET
        field_id = EXCLUDED.field_id, label = EXCLUDED.label, kind = EXCLUDED.kind, unit = EXCLUDED.unit,
        value_text = EXCLUDED.value_text, value = EXCLUDED.value, raw = EXCLUDED.raw, synced_at = now(), deleted_at = NULL
      WHERE (t.field_id, t.label, t.kind, t.unit, t.value_text, t.value, t.raw, t.deleted_at)
        IS DISTINCT FROM (EXCLUDED.field_id, EXCLUDED.label, EXCLUDED.kind, EXCLUDED.unit, EXCLUDED.value_text, EXCLUDED.value, EXCLUDED.raw, NULL::timestamptz)
      RETURNING 1`
  },
  {
    // the parents' live custom fields less those the page brings (a set difference, as for line items)
    name: "custom_fields_removed",
    sql: (sql, v) => sql`
      UPDATE custom_fields AS t SET deleted_at = now()
      FROM (
        SELECT k.parent_id, k.field_key FROM custom_fields AS k
        WHERE k.account_id = ${v.accountId} AND k.parent_type = ${parentType} AND k.deleted_at IS NULL AND EXISTS (SELECT 1 FROM pass)
          AND k.parent_id = ANY (ARRAY(SELECT node ->> 'id' FROM page_rows))
        EXCEPT
        SELECT f.parent_id, f.field_key FROM custom_field_rows AS f
      ) AS gone
      WHERE t.account_id = ${v.accountId} AND t.parent_type = ${parentType} AND t.parent_id = ANY (ARRAY(SELECT node ->> 'id' FROM page_rows))
        AND t.parent_id = gone.parent_id AND t.field_key = gone.field_key`
  }
]

/**
 * The steps of a stream's page statement, in order: the lease, the checkpoint (Checkpoints), its rows, its children's,
 * its custom fields, the seen ids (Checkpoints).
 */
export const pageSteps = cached((stream): ReadonlyArray<LandingStep> => [
  leaseStep,
  checkpointStep,
  nodesStep,
  rowsStep,
  upsertStep,
  ...stream.children.flatMap(childSteps),
  ...(stream.customFields === undefined ? [] : customFieldSteps(stream.customFields)),
  seenStep
])

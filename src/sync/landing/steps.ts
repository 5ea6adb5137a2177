import type { SqlClient } from "@effect/sql"
import { leaseHeld } from "../AccountLeases.js"
import { checkpointStep, seenStep } from "../pass/checkpointSteps.js"
import type { AnyStream, ChildDefinition } from "../streams/Stream.js"
import { customFieldSteps } from "./customFieldSteps.js"
import type { LandingStep, PageValues } from "./LandingStep.js"
import { quoted, upsertSql, upsertStatement } from "./upsertSql.js"

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

import type { SqlClient, Statement } from "@effect/sql"
import type { Column } from "../streams/Stream.js"

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
export const upsertSql = (options: {
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
export const upsertStatement = (sql: SqlClient.SqlClient, accountId: string, t: ReturnType<typeof upsertSql>, guard?: Statement.Fragment) =>
  sql`${sql.literal(t.insert)} SELECT ${accountId}, ${sql.literal(t.select)} ${sql.literal(t.rest)}
      WHERE ${sql.literal(t.changed)}${guard ?? sql.literal("")}
      RETURNING t.id`

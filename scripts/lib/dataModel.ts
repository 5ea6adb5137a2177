/**
 * The README's picture of the data model: a mermaid ER diagram of every table the streams write, their keys and the
 * links between them, generated from the stream definitions so it cannot drift from them.
 */
import type { AnyStream, Column, ColumnType } from "../../src/sync/streams/Stream.js"

/** Mermaid attribute types are one word. */
const typeWord: Record<ColumnType, string> = {
  text: "text",
  integer: "integer",
  numeric: "numeric",
  "double precision": "float8",
  boolean: "boolean",
  timestamptz: "timestamptz",
  jsonb: "jsonb"
}

const linkColumns = (columns: ReadonlyArray<Column>) => columns.filter((c) => c.link !== undefined && c.selected)

/** The first few columns that are neither keys nor links: enough to recognise the table. */
const headline = (columns: ReadonlyArray<Column>) => columns.filter((c) => c.link === undefined && c.selected).slice(0, 3)

const attribute = (c: Column, key = "") => `${typeWord[c.type]} ${c.column}${key}`

const entity = (table: string, attributes: ReadonlyArray<string>, columns: ReadonlyArray<Column> | undefined) => {
  const shown = columns === undefined ? [] : headline(columns)
  const more = columns === undefined ? 0 : columns.length - shown.length - linkColumns(columns).length
  return [
    `  ${table} {`,
    ...[...attributes, ...shown.map((c) => attribute(c))].map((a) => `    ${a}`),
    ...(columns === undefined ? [] : [`    jsonb raw "the record as sent; ${more} more columns"`, "    timestamptz deleted_at"]),
    "  }"
  ]
}

/** One-to-many from the linked table to the table holding the link; `|o` when the link may be null. */
const relation = (from: string, to: string, label: string, nullable: boolean) => `  ${from} ${nullable ? "|o" : "||"}--o{ ${to} : "${label}"`

export const dataModelDiagram = (streams: ReadonlyArray<AnyStream>): string => {
  const lines = ["```mermaid", "erDiagram"]
  const relations: Array<string> = []
  lines.push(...entity("connections", ["text account_id PK", "text account_name", "text status \"active, revoked or disconnected\""], undefined))
  for (const s of streams) {
    const links = linkColumns(s.columns)
    lines.push(...entity(s.table, ["text account_id PK", "text id PK", ...links.map((c) => attribute(c, " FK"))], s.columns))
    for (const c of links) relations.push(relation(c.link!, s.table, c.column, c.nullable))
    for (const child of s.children) {
      const childLinks = linkColumns(child.columns)
      const key = child.keyedByParent ? [`text ${child.parentColumn} PK, FK`] : [`text ${child.parentColumn} FK`]
      lines.push(
        ...entity(
          child.table,
          ["text account_id PK", ...(child.keyedByParent ? key : []), "text id PK", ...(child.keyedByParent ? [] : key), ...childLinks.map((c) => attribute(c, " FK"))],
          child.columns
        )
      )
      relations.push(relation(s.table, child.table, child.parentColumn, false))
      for (const c of childLinks) relations.push(relation(c.link!, child.table, c.column, c.nullable))
    }
    if (s.customFields !== undefined) relations.push(relation(s.table, "custom_fields", `parent_type '${s.customFields}'`, false))
  }
  lines.push(
    ...entity("custom_fields", ["text account_id PK", "text parent_type PK", "text parent_id PK", "text field_key PK", "text label", "text value_text", "jsonb value"], undefined),
    ...entity("sync_runs", ["bigint id PK", "text account_id FK", "text stream", "text outcome", "integer rows"], undefined),
    ...entity("sync_checkpoints", ["text account_id PK", "text stream PK", "timestamptz high_water_mark", "timestamptz last_full_pass_at"], undefined)
  )
  // every table's rows belong to a connection by account_id; drawn for the control tables only, to keep the picture readable
  relations.push(relation("connections", "sync_runs", "account_id", false), relation("connections", "sync_checkpoints", "account_id", false))
  return [...lines, ...relations, "```"].join("\n")
}

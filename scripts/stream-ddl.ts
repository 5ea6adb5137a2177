/**
 * The DDL of the stream tables (a table per stream, a table per child, custom_fields) from the stream definitions,
 * with COMMENTs taken from the schema's descriptions: the draft of a migration, reviewed and committed under sql/ (the
 * migrations are the DDL; test/integration/db/streamTables.test.ts checks they agree with the streams).
 *
 *   npx tsx scripts/stream-ddl.ts [stream ...]            prints it (default: every defined stream and custom_fields)
 *   npx tsx scripts/stream-ddl.ts --write stream [...]    writes it as the next numbered migration, sql/0NN_<stream>.sql
 */
import { isObjectType } from "graphql"
import * as fs from "node:fs"
import * as path from "node:path"
import { serviceSchema } from "../src/api/serviceSchema.js"
import { definedStreams } from "../src/sync/streams/index.js"
import type { AnyStream, ChildDefinition, Column } from "../src/sync/streams/Stream.js"

const literal = (text: string) => `'${text.replace(/\s+/g, " ").trim().replace(/'/g, "''")}'`
const typeDescription = (name: string) => serviceSchema().getType(name)?.description ?? undefined

const bookkeeping = [
  ["raw", "jsonb NOT NULL", "The node as the service sent it (strings Postgres cannot store spelled out, see the README)."],
  ["first_seen_at", "timestamptz NOT NULL DEFAULT now()", "When account-sync first landed the row."],
  ["synced_at", "timestamptz NOT NULL DEFAULT now()", "When the row's content last changed here (an unchanged row is not rewritten)."],
  ["deleted_at", "timestamptz", "When account-sync found the row gone from the service (null: live)."]
] as const

const tableDdl = (
  table: string,
  nodeType: string,
  keyColumns: ReadonlyArray<readonly [string, string, string]>,
  columns: ReadonlyArray<Column>,
  primaryKey: ReadonlyArray<string>,
  indexes: ReadonlyArray<ReadonlyArray<string>>
) => {
  const lines = [
    ...keyColumns.map(([name, type]) => `  ${name} ${type}`),
    ...columns.map((c) => `  ${c.column} ${c.type}`),
    ...bookkeeping.map(([name, type]) => `  ${name} ${type}`),
    `  PRIMARY KEY (${primaryKey.join(", ")})`
  ]
  const out = [`CREATE TABLE ${table} (\n${lines.join(",\n")}\n);`]
  for (const index of indexes) out.push(`CREATE INDEX ${table}_${index.join("_").replace(/account_id_/, "")} ON ${table} (${index.join(", ")});`)
  const description = typeDescription(nodeType)
  out.push(`COMMENT ON TABLE ${table} IS ${literal(`${nodeType}${description ? `: ${description}` : ""}`)};`)
  for (const [name, , comment] of keyColumns) out.push(`COMMENT ON COLUMN ${table}.${name} IS ${literal(comment)};`)
  for (const c of columns) if (c.description) out.push(`COMMENT ON COLUMN ${table}.${c.column} IS ${literal(c.description)};`)
  for (const [name, , comment] of bookkeeping) out.push(`COMMENT ON COLUMN ${table}.${name} IS ${literal(comment)};`)
  return out.join("\n")
}

const account = ["account_id", "text NOT NULL", "The connected account the row belongs to (its `account { id }`)."] as const
const idOf = (nodeType: string) => {
  const type = serviceSchema().getType(nodeType)
  const description = type && isObjectType(type) ? type.getFields().id?.description : undefined
  return ["id", "text NOT NULL", description ?? `The ${nodeType}'s id at the service.`] as const
}
const linkIndexes = (columns: ReadonlyArray<Column>) => columns.filter((c) => c.link !== undefined).map((c) => ["account_id", c.column])

export const streamDdl = (stream: AnyStream) =>
  tableDdl(stream.table, stream.nodeType, [account, idOf(stream.nodeType)], stream.columns, ["account_id", "id"], linkIndexes(stream.columns))

export const childDdl = (stream: AnyStream, child: ChildDefinition) =>
  tableDdl(
    child.table,
    child.nodeType,
    [account, idOf(child.nodeType), [child.parentColumn, "text NOT NULL", `The ${stream.nodeType} the line item belongs to (${stream.table}.id).`]],
    child.columns,
    child.keyedByParent ? ["account_id", child.parentColumn, "id"] : ["account_id", "id"],
    [["account_id", child.parentColumn], ...linkIndexes(child.columns)]
  )

export const customFieldsDdl = `CREATE TABLE custom_fields (
  account_id text NOT NULL,
  parent_type text NOT NULL,
  parent_id text NOT NULL,
  field_key text NOT NULL,
  field_id text,
  label text NOT NULL,
  kind text NOT NULL,
  unit text,
  value_text text,
  value jsonb,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, parent_type, parent_id, field_key)
);
COMMENT ON TABLE custom_fields IS 'The custom fields of clients, invoices, jobs, properties, quotes and users (CustomFieldUnion), replaced with their parent.';
COMMENT ON COLUMN custom_fields.account_id IS 'The connected account the row belongs to (its \`account { id }\`).';
COMMENT ON COLUMN custom_fields.parent_type IS 'The type of the record the field is on: Client, Invoice, Job, Property, Quote or User.';
COMMENT ON COLUMN custom_fields.parent_id IS 'The id of the record the field is on (clients.id, jobs.id, ...).';
COMMENT ON COLUMN custom_fields.field_key IS 'The field''s id, or its label when it has none: unique per record.';
COMMENT ON COLUMN custom_fields.field_id IS 'The identifier to the custom field.';
COMMENT ON COLUMN custom_fields.label IS 'The label of the custom field.';
COMMENT ON COLUMN custom_fields.kind IS 'The kind of value: CustomFieldArea, CustomFieldBoolean, CustomFieldLink, CustomFieldNumber, CustomFieldSelect or CustomFieldText.';
COMMENT ON COLUMN custom_fields.unit IS 'The unit of an area or a number.';
COMMENT ON COLUMN custom_fields.value_text IS 'The value as text: the text, number, true/false, chosen option, URL of a link, or length x width unit of an area.';
COMMENT ON COLUMN custom_fields.value IS 'The value as JSON: a string, number or boolean; {text, url} for a link; {length, width} for an area.';
COMMENT ON COLUMN custom_fields.raw IS 'The custom field as the service sent it.';
COMMENT ON COLUMN custom_fields.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN custom_fields.synced_at IS 'When the row''s content last changed here.';
COMMENT ON COLUMN custom_fields.deleted_at IS 'When the field left its record, or its record was found gone (null: live).';
CREATE INDEX custom_fields_label ON custom_fields (account_id, parent_type, label);`

/** Every table of the stream: its own and its children's, each with its history table (sql/017_history.sql). */
export const streamTablesDdl = (stream: AnyStream) =>
  [
    streamDdl(stream),
    ...stream.children.map((child) => childDdl(stream, child)),
    [stream.table, ...stream.children.map((c) => c.table)].map((table) => `SELECT history_install('${table}');`).join("\n")
  ].join("\n\n")

const migrationsDir = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "sql")

/** The next migration's file name: the number after the highest in sql/, then the streams' names. */
export const nextMigration = (files: ReadonlyArray<string>, names: ReadonlyArray<string>): string => {
  const highest = Math.max(0, ...files.map((f) => /^(\d+)_.*\.sql$/.exec(f)?.[1]).filter((n) => n !== undefined).map(Number))
  return `${String(highest + 1).padStart(3, "0")}_${names.join("_")}.sql`
}

const fail = (message: string): never => {
  console.error(`stream-ddl: ${message}`)
  process.exit(2)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const write = args.includes("--write")
  const names = args.filter((a) => a !== "--write")
  const unknown = names.filter((n) => !definedStreams.some((s) => s.name === n))
  if (unknown.length > 0) fail(`no stream named ${unknown.join(", ")}; the streams are ${definedStreams.map((s) => s.name).join(", ")}`)
  const streams = names.length > 0 ? definedStreams.filter((s) => names.includes(s.name)) : definedStreams
  if (!write) {
    for (const stream of streams) console.log(`-- ${stream.name}\n${streamTablesDdl(stream)}\n`)
    if (names.length === 0) console.log(`-- custom fields\n${customFieldsDdl}`)
  } else {
    if (names.length === 0) fail("--write needs the streams whose tables the migration creates, e.g. --write quotes")
    const files = fs.readdirSync(migrationsDir)
    for (const stream of streams) {
      for (const table of [stream.table, ...stream.children.map((c) => c.table)]) {
        const creator = files.find((f) => new RegExp(`CREATE TABLE (IF NOT EXISTS )?${table}\\b`).test(fs.readFileSync(path.join(migrationsDir, f), "utf8")))
        if (creator !== undefined) fail(`table ${table} of stream ${stream.name} is already created by sql/${creator}`)
      }
    }
    const file = path.join(migrationsDir, nextMigration(files, names))
    const header = `-- The tables of ${names.join(", ")}, drafted by scripts/stream-ddl.ts from the stream definitions: review before committing.\n\n`
    fs.writeFileSync(file, `${header}${streams.map(streamTablesDdl).join("\n\n")}\n`, { flag: "wx" })
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
  }
}

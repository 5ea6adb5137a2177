/**
 * Prints the DDL of the stream tables (a table per stream, a table per child, custom_fields) from the stream
 * definitions, with COMMENTs taken from the schema's descriptions: the draft of a migration, reviewed and committed
 * under sql/ (the migrations are the DDL; test/integration/db/streamTables.test.ts checks they agree with the streams).
 *
 *   npx tsx scripts/stream-ddl.ts [stream ...]        (default: every defined stream)
 */
import { isObjectType } from "graphql"
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

/** The data columns 002_sync.sql created for jobs. */
const jobsColumnsOf002 = [
  "job_number", "title", "job_status", "job_type", "billing_type", "source", "instructions", "default_visit_title", "jobber_web_uri",
  "total", "invoiced_total", "uninvoiced_total", "completed_and_uninvoiced_visits_count", "completed_and_uninvoiced_visits_total",
  "ready_to_close", "allow_review_request", "visit_generation_in_progress", "visit_rescheduling_in_progress",
  "will_client_be_automatically_charged", "start_at", "end_at", "completed_at", "booking_confirmation_sent_at",
  "next_date_to_send_review_sms", "pending_invoice_starts_at", "created_at", "updated_at"
]

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

/** The jobs table predates links and line items: its columns become nullable (excluded fields), links are added. */
export const jobsUpgradeDdl = (stream: AnyStream, existing: ReadonlyArray<string>) => {
  const out = [`ALTER TABLE ${stream.table} ${existing.map((c) => `ALTER COLUMN ${c} DROP NOT NULL`).join(", ")};`]
  const added = stream.columns.filter((c) => !existing.includes(c.column))
  if (added.length > 0) out.push(`ALTER TABLE ${stream.table} ${added.map((c) => `ADD COLUMN ${c.column} ${c.type}`).join(", ")};`)
  for (const [, column] of linkIndexes(stream.columns)) out.push(`CREATE INDEX ${stream.table}_${column} ON ${stream.table} (account_id, ${column});`)
  const description = typeDescription(stream.nodeType)
  out.push(`COMMENT ON TABLE ${stream.table} IS ${literal(`${stream.nodeType}${description ? `: ${description}` : ""}`)};`)
  for (const [name, , comment] of [account, idOf(stream.nodeType), ...bookkeeping]) out.push(`COMMENT ON COLUMN ${stream.table}.${name} IS ${literal(comment)};`)
  for (const c of stream.columns) if (c.description) out.push(`COMMENT ON COLUMN ${stream.table}.${c.column} IS ${literal(c.description)};`)
  return out.join("\n")
}

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

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2)
  const streams = names.length > 0 ? definedStreams.filter((s) => names.includes(s.name)) : definedStreams
  for (const stream of streams) {
    console.log(`-- ${stream.name}\n${stream.name === "jobs" ? jobsUpgradeDdl(stream, jobsColumnsOf002) : streamDdl(stream)}\n`)
    for (const child of stream.children) console.log(`${childDdl(stream, child)}\n`)
  }
  if (names.length === 0) console.log(`-- custom fields\n${customFieldsDdl}`)
}

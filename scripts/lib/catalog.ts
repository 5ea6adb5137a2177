/**
 * What the stream definitions say to the people who query the warehouse, generated so it cannot drift from them:
 * the README's table of streams and a dbt sources file. `npm run docs` writes both; a test checks they are current.
 */
import { Duration } from "effect"
import { stringify } from "yaml"
import { requestedPointsPerRow } from "../../src/run/progressEstimate.js"
import type { AnyStream, ChildDefinition, Column } from "../../src/sync/streams/Stream.js"

export { requestedPointsPerRow }

const key = "`(account_id, id)`"
const childKey = (child: ChildDefinition) => (child.keyedByParent ? `\`(account_id, ${child.parentColumn}, id)\`` : "`(account_id, id)`")
const links = (columns: ReadonlyArray<Column>) =>
  columns
    .filter((c) => c.link !== undefined && c.selected)
    .map((c) => `\`${c.column}\` → ${c.link}`)
    .join(", ")

const cadence = (stream: AnyStream) => (stream.fullPassEvery ? Duration.format(stream.fullPassEvery) : "SYNC_FULL_PASS_EVERY")

/** The README's table: one row per stream and per child table. */
export const streamsTable = (streams: ReadonlyArray<AnyStream>): string => {
  const rows = [
    "| stream / table | key | links | incremental pass | full pass | pts/row requested | what an incremental pass misses |",
    "| --- | --- | --- | --- | --- | --- | --- |"
  ]
  for (const s of streams) {
    const extras = [...s.children.map((c) => `\`${c.table}\``), ...(s.customFields ? ["`custom_fields`"] : [])]
    rows.push(
      `| \`${s.table}\`${extras.length > 0 ? ` (+ ${extras.join(", ")})` : ""} | ${key} | ${links(s.columns) || "-"} | ${s.incremental.description} | every ${cadence(s)} | ${requestedPointsPerRow(s).toFixed(0)} | ${s.incremental.misses} |`
    )
    for (const c of s.children) {
      rows.push(
        `| ↳ \`${c.table}\` | ${childKey(c)} | \`${c.parentColumn}\` → ${s.table}${links(c.columns) ? `, ${links(c.columns)}` : ""} | with its parent (up to ${c.innerPage} a parent per page, the rest followed up) | with its parent | in the parent's | a removed line item, until the parent lands again |`
      )
    }
  }
  return rows.join("\n")
}

const describe = (text: string | undefined) => (text ? text.replace(/\s+/g, " ").trim() : undefined)

const bookkeeping = [
  { name: "raw", description: "The node as the service sent it." },
  { name: "first_seen_at", description: "When account-sync first landed the row." },
  { name: "synced_at", description: "When the row's content last changed here (an unchanged row is not rewritten)." },
  { name: "deleted_at", description: "When account-sync found the row gone from the service (null: live)." }
]

const columnEntry = (c: Column, schema: string) => ({
  name: c.column,
  ...(describe(c.description) ? { description: describe(c.description) } : {}),
  ...(c.nullable || !c.selected ? {} : { data_tests: ["not_null"] }),
  ...(c.link !== undefined && c.selected
    ? {
        data_tests: [
          ...(c.nullable ? [] : ["not_null"]),
          // rows land in any order and a link may point at a record deleted since: a dangling link warns
          { relationships: { to: `source('${schema}', '${c.link}')`, field: "id", config: { severity: "warn" } } }
        ]
      }
    : {})
})

const tableEntry = (name: string, description: string, keyColumns: ReadonlyArray<string>, columns: ReadonlyArray<Column>, schema: string, extra: ReadonlyArray<object>) => ({
  name,
  description,
  columns: [
    { name: "account_id", description: "The connected account the row belongs to.", data_tests: ["not_null"] },
    { name: "id", description: "The record's id at the service.", data_tests: ["not_null"] },
    ...extra,
    ...columns.map((c) => columnEntry(c, schema)),
    ...bookkeeping
  ],
  data_tests: [{ unique: { column_name: `(${keyColumns.join(" || '/' || ")})` } }]
})

/** A dbt `warn_after`/`error_after` in whole minutes. */
const minutes = (d: Duration.Duration) => ({ count: Math.ceil(Duration.toMinutes(d)), period: "minute" })

/**
 * The freshness of each stream's data, from the view `stream_freshness` (migration 011): when every active account's
 * data of the stream was last known current (a finished pass, applied change events), not `synced_at`, which only
 * moves when a row changes and so calls a quiet account stale. One entry per stream, each with its own cadence:
 * warn when stale (`staleAfter`: cadence plus margin, with the default settings), error at twice that.
 */
const freshnessSource = (streams: ReadonlyArray<AnyStream>, staleAfter: (stream: AnyStream) => Duration.Duration) => ({
  name: "account_sync_freshness",
  description:
    "When each stream's data was last known current, for `dbt source freshness`: per stream, the stalest active account's last finished pass or applied change events (the view stream_freshness). Thresholds follow the default SYNC_EVERY, SYNC_FULL_PASS_EVERY and SYNC_STALE_MARGIN: regenerate with `npm run docs` after changing the definitions, or override them in your project.",
  schema: "{{ env_var('DB_SCHEMA', 'account_sync') }}",
  loaded_at_field: "data_current_at",
  tables: streams.map((s) => ({
    name: s.name,
    identifier: "stream_freshness",
    description: `The freshness of ${s.table}${s.children.length > 0 ? ` (and ${s.children.map((c) => c.table).join(", ")})` : ""}: one row of stream_freshness.`,
    freshness: {
      warn_after: minutes(staleAfter(s)),
      error_after: minutes(Duration.times(staleAfter(s), 2)),
      filter: `stream = '${s.name}'`
    },
    columns: [
      { name: "stream", description: "The stream.", data_tests: ["not_null"] },
      { name: "data_current_at", description: "Every active account's data of the stream was known current at this time (the stalest account's; one that never finished a pass counts from when it connected)." },
      { name: "accounts", description: "Active accounts counted." }
    ]
  }))
})

/**
 * `config/dbt/models/sources.yml`: every stream table, child table, custom_fields and the connections an analyst
 * joins, with descriptions and keys; and the freshness of each stream's data (a source of its own over the view
 * stream_freshness: see freshnessSource).
 */
export const dbtSources = (
  streams: ReadonlyArray<AnyStream>,
  typeDescription: (type: string) => string | undefined,
  staleAfter: (stream: AnyStream) => Duration.Duration
): string => {
  const schema = "account_sync"
  const tables: Array<object> = []
  for (const s of streams) {
    tables.push(tableEntry(s.table, describe(typeDescription(s.nodeType)) ?? s.nodeType, ["account_id", "id"], s.columns, schema, []))
    for (const c of s.children) {
      const parent = {
        name: c.parentColumn,
        description: `The ${s.nodeType} the line item belongs to.`,
        data_tests: ["not_null", { relationships: { to: `source('${schema}', '${s.table}')`, field: "id" } }]
      }
      const keyColumns = c.keyedByParent ? ["account_id", c.parentColumn, "id"] : ["account_id", "id"]
      tables.push(tableEntry(c.table, describe(typeDescription(c.nodeType)) ?? c.nodeType, keyColumns, c.columns, schema, [parent]))
    }
  }
  const document = {
    version: 2,
    sources: [
      {
        name: schema,
        description: "The connected accounts of the service, landed by account-sync (generated from its stream definitions by `npm run docs`).",
        schema: "{{ env_var('DB_SCHEMA', 'account_sync') }}",
        // no freshness on the stream tables: synced_at moves only when a row changes (a quiet account would look
        // stale); the freshness of their data is account_sync_freshness's, below
        tables: [
          {
            name: "connections",
            description: "One row per connected account: its name and status. Every table's account_id is one of these.",
            columns: [
              { name: "account_id", description: "The account's id at the service.", data_tests: ["not_null", "unique"] },
              { name: "account_name", description: "The account's name, as the service last gave it.", data_tests: ["not_null"] },
              { name: "status", description: "active (synced), revoked (reconnect it) or disconnected.", data_tests: [{ accepted_values: { values: ["active", "revoked", "disconnected"] } }] }
            ]
          },
          ...tables,
          {
            name: "custom_fields",
            description: "The custom fields of clients, invoices, jobs, properties, quotes and users, replaced with their parent.",
            columns: [
              { name: "account_id", description: "The connected account the row belongs to.", data_tests: ["not_null"] },
              { name: "parent_type", description: "The type of the record the field is on: Client, Invoice, Job, Property, Quote or User.", data_tests: ["not_null"] },
              { name: "parent_id", description: "The id of the record the field is on (clients.id, jobs.id, ...).", data_tests: ["not_null"] },
              { name: "field_key", description: "The field's id, or its label when it has none: unique per record.", data_tests: ["not_null"] },
              { name: "field_id", description: "The identifier of the custom field." },
              { name: "label", description: "The label of the custom field.", data_tests: ["not_null"] },
              { name: "kind", description: "The kind of value: CustomFieldArea, CustomFieldBoolean, CustomFieldLink, CustomFieldNumber, CustomFieldSelect or CustomFieldText.", data_tests: ["not_null"] },
              { name: "unit", description: "The unit of an area or a number." },
              { name: "value_text", description: "The value as text." },
              { name: "value", description: "The value as JSON: a string, number or boolean; {text, url} for a link; {length, width} for an area." },
              ...bookkeeping
            ],
            data_tests: [{ unique: { column_name: "(account_id || '/' || parent_type || '/' || parent_id || '/' || field_key)" } }]
          },
          {
            name: "sync_runs",
            description: "One row per account, stream and pass: counts, points spent, outcome. Its freshness is the connector's.",
            loaded_at_field: "finished_at",
            freshness: { warn_after: { count: 1, period: "hour" }, error_after: { count: 6, period: "hour" } }
          }
        ]
      },
      freshnessSource(streams, staleAfter)
    ]
  }
  return `# Generated by \`npm run docs\` from the stream definitions (src/sync/streams): do not edit by hand.\n${stringify(document, { lineWidth: 0 })}`
}

/** The tables a staging model is made for: every stream table, every child table, custom_fields. */
const stagedTables = (streams: ReadonlyArray<AnyStream>) => [
  ...streams.flatMap((s) => [{ table: s.table, what: `${s.nodeType} records` }, ...s.children.map((c) => ({ table: c.table, what: `line items of ${s.table}` }))]),
  { table: "custom_fields", what: "custom fields" }
]

/**
 * `config/dbt/models/staging/stg_<table>.sql`: the live rows of a table (deleted_at is null) with the name of the
 * account they belong to: what most questions start from.
 */
export const dbtStagingModels = (streams: ReadonlyArray<AnyStream>): Record<string, string> =>
  Object.fromEntries(
    stagedTables(streams).map(({ table, what }) => [
      `config/dbt/models/staging/stg_${table}.sql`,
      [
        "-- Generated by `npm run docs` from the stream definitions (src/sync/streams): do not edit by hand.",
        `-- The live ${what} (deleted_at is null), with the name of the account they belong to.`,
        "select connections.account_name, t.*",
        `from {{ source('account_sync', '${table}') }} as t`,
        "join {{ source('account_sync', 'connections') }} as connections using (account_id)",
        "where t.deleted_at is null",
        ""
      ].join("\n")
    ])
  )

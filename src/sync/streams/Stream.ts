import { type DocumentNode, getNamedType } from "graphql"
import { type Duration, Schema } from "effect"
import { serviceSchema } from "../../api/serviceSchema.js"
import type { Incremental } from "../pass/Incremental.js"
import { byIds, type Refetch } from "../pass/Refetch.js"
import type { Variables } from "../model.js"
import { type Column, deriveColumns, graphqlField, snake } from "./columns.js"
import { childSelection, connectionQuery, countQuery, customFieldsSelection, followUpQuery, type Paging, type PagingDocuments, pascal } from "./documents.js"

export type { Paging, PagingDocuments } from "./documents.js"

export type { Column, ColumnType } from "./columns.js"

/** The rows of a connection inside each node (line items): a child table, replaced with its parent. */
export interface ChildDefinition {
  /** The connection field on the parent node, e.g. "lineItems". */
  readonly field: string
  readonly table: string
  readonly nodeType: string
  readonly node: Schema.Schema<{ readonly id: string }, any>
  readonly columns: ReadonlyArray<Column>
  /** The column holding the parent's id, e.g. "job_id". */
  readonly parentColumn: string
  /**
   * The child's id is unique only under its parent (a visit's line items are its job's): the key is
   * (account_id, parent, id) instead of (account_id, id).
   */
  readonly keyedByParent: boolean
  /** Children asked per parent on a page (a parent with more gets the rest in follow-up queries). */
  readonly innerPage: number
  /** The variable that sizes the inner page in the page query, e.g. "lineItemsFirst". */
  readonly firstVariable: string
  /**
   * The rest of one parent's children, for each way of paging: the parents from `$offset` (or after `$after`) of the
   * pass's order, `$first` of them (the parent is found among them by id), their children from `$childOffset`.
   */
  readonly followUp: Readonly<Record<Paging, DocumentNode>>
}

/** What a stream is, written by hand: everything else is derived by `define`. */
export interface StreamSpec<Fields extends Schema.Struct.Fields> {
  /** The stream's name (`--stream`, `sync_runs.stream`), and its table's unless `table` says otherwise. */
  readonly name: string
  readonly table?: string
  /** The root field of Query that lists the collection, e.g. "jobs". */
  readonly connection: string
  /** The GraphQL type of a node, e.g. "Job" (descriptions and field checks come from it). */
  readonly nodeType: string
  /** One node as the service sends it: its fields are the columns and the selection. Must have `id`. */
  readonly fields: Fields
  /** Line item connections of the node, each a child table. */
  readonly children?: ReadonlyArray<ChildSpec>
  /** The node's custom fields land in `custom_fields` (parent type: nodeType). */
  readonly customFields?: boolean
  /** Variables of a full pass: an order that does not move when rows change (new rows may append). */
  readonly fullPass: Variables
  /**
   * A list that is the union of several (users: one list per status): a pass pages each in turn, each with these
   * variables added. Default: one.
   */
  readonly partitions?: ReadonlyArray<Variables>
  readonly incremental: Incremental
  /** How often a full pass runs (default: SYNC_FULL_PASS_EVERY). */
  readonly fullPassEvery?: Duration.Duration
  /** Variables that select exactly these rows, when the connection filters by id (`{ filter: { ids } }`). */
  readonly lookup?: (ids: ReadonlyArray<string>) => Variables
  /**
   * Where the connection does not filter by id: a value a record keeps for life, stored in `column` (its creation
   * time, its client), and the variables of a narrow listing of the records with that value. The end of a full pass
   * asks for a row it did not see this way before marking it deleted (sync/SweepPlan.ts).
   */
  readonly near?: Near
  /** The largest `first` the service accepts (100). */
  readonly maxPageSize?: number
  /** The prefix of the service's webhook topics for this collection (`JOB`: JOB_CREATE, JOB_UPDATE, JOB_DESTROY, ...). */
  readonly topic?: string
  /** How the records change events name are read again (default: by id, when `lookup` is given). */
  readonly refetch?: Refetch
  /**
   * Other streams whose records this stream's rows hold data of, with no event of this stream when they change (a
   * visit's line items are its job's): when records of `stream` change (a change event, a destroy included, or an
   * incremental pass), the stored rows of this one whose `column` (a link to `stream`) names one of them are read again
   * its own way (`refetch`) and landed. See sync/Dependents.ts.
   */
  readonly dependsOn?: ReadonlyArray<Dependency>
}

/** A narrow listing of the records that share a stored value with a row (StreamSpec.near). */
export interface Near {
  readonly column: string
  readonly variables: (value: string) => Variables
}

/** `column` of the stream's rows links them to records of `stream`, whose changes change them (StreamSpec.dependsOn). */
export interface Dependency {
  readonly stream: string
  readonly column: string
}

export interface ChildSpec {
  readonly field: string
  readonly table: string
  readonly nodeType: string
  readonly fields: Schema.Struct.Fields
  readonly parentColumn: string
  readonly keyedByParent?: boolean
  readonly innerPage?: number
}

/**
 * A stream: a value that carries its data (node Schema, columns, table, documents) and its behaviour (how a full and
 * an incremental pass page, how to look rows up). Pager, Warehouse and the runner ask it what to do; none switches on
 * its name.
 */
export interface StreamDefinition<Node extends { readonly id: string } = { readonly id: string }> {
  readonly name: string
  readonly table: string
  readonly connection: string
  readonly nodeType: string
  /** One node, checked (or decoded) from the JSON the service sent. */
  readonly node: Schema.Schema<Node, any>
  /** Mapped columns besides `account_id` and `id` (and raw, first_seen_at, synced_at, deleted_at). */
  readonly columns: ReadonlyArray<Column>
  readonly children: ReadonlyArray<ChildDefinition>
  /** The parent type of its rows in `custom_fields`, when the stream lands custom fields. */
  readonly customFields: string | undefined
  /** The page query: `$first: Int!`, `$offset: Int!`, the connection's own arguments, and each child's inner page. */
  readonly document: DocumentNode
  /** The same pages with nothing but each node's id (a listing to check a pass against, at a few points a row). */
  readonly idsDocument: DocumentNode
  /** The page and ids queries of each way of paging (`offset`: `document` and `idsDocument`). */
  readonly documents: Readonly<Record<Paging, PagingDocuments>>
  /** The number of rows in the connection. */
  readonly countDocument: DocumentNode
  /** Where the connection is in `data`. */
  readonly connectionPath: ReadonlyArray<string>
  readonly maxPageSize: number
  readonly fullPass: Variables
  readonly partitions: ReadonlyArray<Variables>
  readonly incremental: Incremental
  readonly fullPassEvery: Duration.Duration | undefined
  /** The node's last-update time (ISO 8601, service time), when the type has one: feeds the high-water mark. */
  readonly updatedAt: ((node: Node) => string) | undefined
  /** Variables that select exactly these rows, when the connection filters by id. */
  readonly lookup: ((ids: ReadonlyArray<string>) => Variables) | undefined
  /** A narrow listing by a stored value (StreamSpec.near); undefined when not given or its column is excluded. */
  readonly near: Near | undefined
  /** The prefix of its webhook topics, when the service sends change events for it. */
  readonly topic: string | undefined
  /** How records named by change events are read again; undefined: only its full passes bring them. */
  readonly refetch: Refetch | undefined
  /** The streams whose changes change its rows, by the column that links them (none when that column is excluded). */
  readonly dependsOn: ReadonlyArray<Dependency>
  /** The spec it was defined from (configuration derives a narrower stream from it). */
  readonly spec: StreamSpec<any>
}

export type AnyStream = StreamDefinition<any>

/** One custom field as the service sends it: its kind, label, and the value fields of its kind. */
export const CustomFieldNode = Schema.Struct({
  __typename: Schema.String,
  id: Schema.optional(Schema.NullOr(Schema.String)),
  label: Schema.String
})

/** `build` runs when first asked, once: a stream's documents are parsed when a pass or a test first needs them, not at import. */
const memoised = <A>(build: () => A): (() => A) => {
  let built: { readonly value: A } | undefined
  return () => (built ??= { value: build() }).value
}

const defineChild = (parent: StreamSpec<any>, spec: ChildSpec): { readonly child: ChildDefinition; readonly selection: string } => {
  const node = Schema.Struct(spec.fields)
  const parentType = serviceSchema().getType(parent.nodeType)
  const connectionField = graphqlField(parentType, spec.field, `${parent.name}.${spec.field}`)
  const nodeType = serviceSchema().getType(spec.nodeType)
  if (getNamedType(connectionField.type).name !== `${spec.nodeType}Connection`) {
    throw new Error(`stream ${parent.name}: ${parent.nodeType}.${spec.field} is not a connection of ${spec.nodeType}`)
  }
  const { columns, selection } = deriveColumns(spec.fields, nodeType)
  const firstVariable = `${spec.field}First`
  const inner = selection.join(" ")
  const followUpOf = (paging: Paging, suffix: string) =>
    followUpQuery(`${pascal(parent.name)}${pascal(spec.field)}Page${suffix}`, parent.connection, spec.field, inner, paging)
  const followUp = memoised(() => ({ offset: followUpOf("offset", ""), after: followUpOf("after", "AfterCursor") }))
  return {
    child: {
      field: spec.field,
      table: spec.table,
      nodeType: spec.nodeType,
      node: node as unknown as Schema.Schema<{ readonly id: string }, any>,
      columns,
      parentColumn: spec.parentColumn,
      keyedByParent: spec.keyedByParent ?? false,
      innerPage: spec.innerPage ?? 20,
      firstVariable,
      get followUp() {
        return followUp()
      }
    },
    selection: childSelection(spec.field, `$${firstVariable}`, inner)
  }
}

/**
 * A stream from its spec: node Schema, columns, selection and documents derived from `fields` (and its children's),
 * checked against the schema. `exclude` leaves fields of the node out (`"instructions"`, `"amounts"`, `"lineItems"`,
 * `"customFields"`): not requested, their columns stay null; an unknown one is an error naming it.
 */
export const define = <Fields extends Schema.Struct.Fields & { readonly id: Schema.Schema<string, string, never> }>(
  spec: StreamSpec<Fields>,
  exclude: ReadonlyArray<string> = []
): StreamDefinition<Schema.Struct.Type<Fields> & { readonly id: string }> => {
  const excluded = new Set(exclude)
  const known = new Set([
    ...Object.keys(spec.fields).filter((f) => f !== "id"),
    ...(spec.children ?? []).map((c) => c.field),
    ...(spec.customFields ? ["customFields"] : [])
  ])
  for (const e of excluded) {
    if (!known.has(e)) {
      throw new Error(`stream ${spec.name}: cannot exclude \`${e}\`: not one of its fields (${[...known].join(", ")}; the id cannot be excluded)`)
    }
  }
  // an excluded field is not requested: the node the service sends has no such field to check
  const node = Schema.Struct(Object.fromEntries(Object.entries(spec.fields).filter(([f]) => !excluded.has(f))) as Fields)
  const nodeType = serviceSchema().getType(spec.nodeType)
  if (nodeType === undefined || nodeType === null) throw new Error(`stream ${spec.name}: the schema subset has no type ${spec.nodeType}`)
  // the connection is checked here, where the documents that page it are built later (when first used)
  graphqlField(serviceSchema().getQueryType(), spec.connection, `(root) ${spec.connection}`)
  const { columns, selection } = deriveColumns(spec.fields, nodeType, excluded)
  for (const d of spec.dependsOn ?? []) {
    if (!columns.some((c) => c.column === d.column && c.link === d.stream)) {
      const links = columns.filter((c) => c.link !== undefined).map((c) => `${c.column} -> ${c.link}`)
      throw new Error(`stream ${spec.name}: dependsOn ${d.stream}: ${d.column} is not one of its columns linking to ${d.stream} (its links: ${links.join(", ")})`)
    }
  }
  // an excluded link stays null: which rows hold a changed record's data is not known, their own passes bring them
  const dependsOn = (spec.dependsOn ?? []).filter((d) => columns.some((c) => c.column === d.column && c.selected))
  const children = (spec.children ?? []).filter((c) => !excluded.has(c.field)).map((c) => defineChild(spec, c))
  const withCustomFields = spec.customFields === true && !excluded.has("customFields")
  const nodeSelection = [...selection, ...children.map((c) => c.selection), ...(withCustomFields ? [customFieldsSelection] : [])].join(" ")
  const childVariables = children.map((c) => `$${c.child.firstVariable}: Int!`)
  const hasUpdatedAt = "updatedAt" in spec.fields
  const operation = pascal(spec.name)
  const documentsOf = (paging: Paging, suffix: string): PagingDocuments => ({
    page: connectionQuery(`${operation}Page${suffix}`, spec.connection, nodeSelection, paging, childVariables),
    ids: connectionQuery(`${operation}Ids${suffix}`, spec.connection, "id", paging)
  })
  const documents = memoised(() => ({ offset: documentsOf("offset", ""), after: documentsOf("after", "AfterCursor") }))
  const countDocument = memoised(() => countQuery(`${operation}Count`, spec.connection))
  return {
    name: spec.name,
    table: spec.table ?? snake(spec.connection),
    connection: spec.connection,
    nodeType: spec.nodeType,
    node: node as unknown as Schema.Schema<Schema.Struct.Type<Fields> & { readonly id: string }, any>,
    columns,
    children: children.map((c) => c.child),
    customFields: withCustomFields ? spec.nodeType : undefined,
    get document() {
      return documents().offset.page
    },
    get idsDocument() {
      return documents().offset.ids
    },
    get documents() {
      return documents()
    },
    get countDocument() {
      return countDocument()
    },
    connectionPath: [spec.connection],
    maxPageSize: spec.maxPageSize ?? 100,
    fullPass: spec.fullPass,
    partitions: spec.partitions ?? [{}],
    incremental: spec.incremental,
    fullPassEvery: spec.fullPassEvery,
    updatedAt: hasUpdatedAt ? (n) => (n as unknown as { readonly updatedAt: string }).updatedAt : undefined,
    lookup: spec.lookup,
    near: spec.near !== undefined && columns.some((c) => c.column === spec.near!.column && c.selected) ? spec.near : undefined,
    topic: spec.topic,
    refetch: spec.refetch ?? (spec.lookup ? byIds(spec.lookup) : undefined),
    dependsOn,
    spec
  }
}

/** The same stream with `exclude` left out (configuration: SYNC_EXCLUDE_FIELDS). */
export const excluding = (stream: AnyStream, exclude: ReadonlyArray<string>): AnyStream => (exclude.length === 0 ? stream : define(stream.spec, exclude))

/** Every table a stream writes: its own and its children's (custom fields aside). */
export const tablesOf = (stream: AnyStream): ReadonlyArray<string> => [stream.table, ...stream.children.map((c) => c.table)]

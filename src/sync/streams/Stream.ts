import { type DocumentNode, getNamedType, type GraphQLField, type GraphQLNamedType, isObjectType, parse } from "graphql"
import { type Duration, Option, Schema, SchemaAST as AST } from "effect"
import { serviceSchema } from "../../api/serviceSchema.js"
import type { Incremental } from "../Incremental.js"
import { byIds, type Refetch } from "../Refetch.js"
import type { Variables } from "../model.js"
import { EmbeddedAnnotation, LinkAnnotation } from "./fields.js"

/** Postgres types a mapped column can have; the Warehouse takes each column out of the node JSON as that type. */
export type ColumnType = "text" | "integer" | "double precision" | "boolean" | "timestamptz" | "jsonb"

export interface Column {
  /** Where the value is in the node, e.g. ["jobNumber"], ["client", "id"], ["amounts", "total"]. */
  readonly path: ReadonlyArray<string>
  /** Column of the table (snake_case of the path; a link is `<field>_id`). */
  readonly column: string
  readonly type: ColumnType
  readonly nullable: boolean
  /** For a link column: the stream (or child table) the id belongs to. */
  readonly link?: string
  /** The schema's description of the field. */
  readonly description?: string
  /** False when the field is excluded by configuration: not requested, the column stays null. */
  readonly selected: boolean
}

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
  /** The rest of one parent's children: the parent at `$offset` of the pass's order, its children from `$childOffset`. */
  readonly followUpDocument: DocumentNode
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
  /** The largest `first` the service accepts (100). */
  readonly maxPageSize?: number
  /** The prefix of the service's webhook topics for this collection (`JOB`: JOB_CREATE, JOB_UPDATE, JOB_DESTROY, ...). */
  readonly topic?: string
  /** How the records change events name are read again (default: by id, when `lookup` is given). */
  readonly refetch?: Refetch
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
  /** The same pages with nothing but each node's id (a listing to check a pass against, at a point a row). */
  readonly idsDocument: DocumentNode
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
  /** The prefix of its webhook topics, when the service sends change events for it. */
  readonly topic: string | undefined
  /** How records named by change events are read again; undefined: only its full passes bring them. */
  readonly refetch: Refetch | undefined
  /** The spec it was defined from (configuration derives a narrower stream from it). */
  readonly spec: StreamSpec<any>
}

export type AnyStream = StreamDefinition<any>

export const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

const hasAnnotation = (ast: AST.AST, id: symbol) => Option.isSome(AST.getAnnotation(ast, id))

/** A nullable field's inner type (`NullOr(X)` -> X, nullable), else the type itself. */
const unwrapNull = (ast: AST.AST): { readonly ast: AST.AST; readonly nullable: boolean } => {
  if (ast._tag === "Union") {
    const rest = ast.types.filter((t) => !(t._tag === "Literal" && t.literal === null))
    if (rest.length === 1 && rest.length < ast.types.length) return { ast: rest[0]!, nullable: true }
  }
  return { ast, nullable: false }
}

const scalarType = (ast: AST.AST, where: string): ColumnType => {
  switch (ast._tag) {
    case "Refinement": {
      const id = Option.getOrUndefined(AST.getIdentifierAnnotation(ast))
      if (id === "DateTime") return "timestamptz"
      if (id === "Int") return "integer"
      return scalarType(ast.from, where)
    }
    case "StringKeyword":
      return "text"
    case "NumberKeyword":
      return "double precision"
    case "BooleanKeyword":
      return "boolean"
    case "Literal":
      return typeof ast.literal === "string" ? "text" : typeof ast.literal === "number" ? "double precision" : "boolean"
    case "Union":
      if (ast.types.every((t) => t._tag === "Literal" && typeof t.literal === "string")) return "text"
      break
    case "TupleType":
    case "TypeLiteral":
      return "jsonb"
  }
  throw new Error(`stream field ${where}: no column type for a Schema of kind ${ast._tag}`)
}

/** The selection of an object kept whole (a jsonb column): every field of its Schema. */
const wholeSelection = (ast: AST.AST): string => {
  const inner = unwrapNull(ast).ast
  if (inner._tag === "TupleType") return inner.rest.length > 0 ? wholeSelection(inner.rest[0]!.type) : ""
  if (inner._tag !== "TypeLiteral") return ""
  return `{ ${inner.propertySignatures.map((ps) => `${String(ps.name)} ${wholeSelection(ps.type)}`.trim()).join(" ")} }`
}

const graphqlField = (type: GraphQLNamedType | undefined | null, name: string, where: string): GraphQLField<unknown, unknown> => {
  if (type === undefined || type === null || !isObjectType(type)) {
    throw new Error(`stream field ${where}: ${type?.name ?? "the type"} is not an object type of the schema`)
  }
  const field = type.getFields()[name]
  if (field === undefined) throw new Error(`stream field ${where}: ${type.name} has no field \`${name}\` in the schema subset`)
  return field
}

/** The columns and the GraphQL selection of a node's fields (an embedded object recurses with a prefix). */
const derive = (
  fields: ReadonlyArray<AST.PropertySignature>,
  type: GraphQLNamedType | undefined,
  prefix: ReadonlyArray<string>,
  parentNullable: boolean,
  excluded: ReadonlySet<string>
): { readonly columns: ReadonlyArray<Column>; readonly selection: ReadonlyArray<string> } => {
  const columns: Array<Column> = []
  const selection: Array<string> = []
  for (const ps of fields) {
    const name = String(ps.name)
    const path = [...prefix, name]
    const where = path.join(".")
    const gql = graphqlField(type, name, where)
    if (prefix.length === 0 && name === "id") {
      selection.push("id")
      continue
    }
    const selected = !path.some((_, i) => excluded.has(path.slice(0, i + 1).join(".")))
    const { ast, nullable: ownNullable } = unwrapNull(ps.type)
    const nullable = parentNullable || ownNullable || ps.isOptional
    const description = gql.description ?? undefined
    const about = { selected, ...(description ? { description } : {}) }
    if (hasAnnotation(ast, LinkAnnotation)) {
      const target = Option.getOrThrow(AST.getAnnotation<string>(ast, LinkAnnotation))
      columns.push({ path: [...path, "id"], column: `${path.map(snake).join("_")}_id`, type: "text", nullable, link: target, ...about })
      if (selected) selection.push(`${name} { id }`)
    } else if (hasAnnotation(ast, EmbeddedAnnotation) && ast._tag === "TypeLiteral") {
      const inner = derive(ast.propertySignatures, getNamedType(gql.type), path, nullable, excluded)
      columns.push(...inner.columns)
      if (inner.selection.length > 0) selection.push(`${name} { ${inner.selection.join(" ")} }`)
    } else {
      columns.push({ path, column: path.map(snake).join("_"), type: scalarType(ast, where), nullable, ...about })
      if (selected) selection.push(`${name} ${wholeSelection(ast)}`.trim())
    }
  }
  return { columns, selection }
}

const pascal = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())

/** Arguments a stream never passes: pagination is the pager's, search is not a list. */
const notPassed = new Set(["first", "last", "after", "before", "offset", "searchTerm", "searchFields"])

/** The root field's own arguments a stream's queries pass through as variables (its order, filter, ...). */
const passedArguments = (connection: string) =>
  graphqlField(serviceSchema().getQueryType(), connection, `(root) ${connection}`)
    .args.filter((a) => !notPassed.has(a.name))
    .map((a) => ({ name: a.name, type: String(a.type) }))

/**
 * A query over the stream's connection: `first` rows from position `offset` (positions, not cursors: a pass checks
 * that each page joins the rows it already has, whatever the service's cursors are), with the connection's own
 * arguments, selecting `selection` of each node. No pageInfo: a page shorter than `first` is the last (pageInfo would
 * cost its fields once per row slot).
 */
const connectionQuery = (operation: string, connection: string, selection: string, extraVariables: ReadonlyArray<string> = []): DocumentNode => {
  const passed = passedArguments(connection)
  const declared = ["$first: Int!", "$offset: Int!", ...passed.map((a) => `$${a.name}: ${a.type}`), ...extraVariables].join(", ")
  const args = ["first: $first", "offset: $offset", ...passed.map((a) => `${a.name}: $${a.name}`)].join(", ")
  return parse(`query ${operation}(${declared}) { ${connection}(${args}) { nodes { ${selection} } } }`)
}

/** How many rows the connection holds (`first: 1`: the cheapest page that carries the count). */
const countQuery = (operation: string, connection: string): DocumentNode => {
  const passed = passedArguments(connection).filter((a) => a.name !== "sort")
  const declared = passed.map((a) => `$${a.name}: ${a.type}`).join(", ")
  const args = ["first: 1", ...passed.map((a) => `${a.name}: $${a.name}`)].join(", ")
  return parse(`query ${operation}${declared ? `(${declared})` : ""} { ${connection}(${args}) { totalCount } }`)
}

/** Every kind of custom field with its value (`options` of a select is left out: its value is what was chosen). */
export const customFieldsSelection =
  "customFields { __typename " +
  "... on CustomFieldArea { id label unit valueArea { length width } } " +
  "... on CustomFieldBoolean { id label valueBoolean } " +
  "... on CustomFieldLink { id label valueText valueUrl } " +
  "... on CustomFieldNumber { id label unit valueNumber } " +
  "... on CustomFieldSelect { id label valueSelect } " +
  "... on CustomFieldText { id label valueText } }"

/** One custom field as the service sends it: its kind, label, and the value fields of its kind. */
export const CustomFieldNode = Schema.Struct({
  __typename: Schema.String,
  id: Schema.optional(Schema.NullOr(Schema.String)),
  label: Schema.String
})

const defineChild = (parent: StreamSpec<any>, spec: ChildSpec): { readonly child: ChildDefinition; readonly selection: string } => {
  const node = Schema.Struct(spec.fields)
  const parentType = serviceSchema().getType(parent.nodeType)
  const connectionField = graphqlField(parentType, spec.field, `${parent.name}.${spec.field}`)
  const nodeType = serviceSchema().getType(spec.nodeType)
  if (getNamedType(connectionField.type).name !== `${spec.nodeType}Connection`) {
    throw new Error(`stream ${parent.name}: ${parent.nodeType}.${spec.field} is not a connection of ${spec.nodeType}`)
  }
  const { columns, selection } = derive((node.ast as AST.TypeLiteral).propertySignatures, nodeType, [], false, new Set())
  const firstVariable = `${spec.field}First`
  const inner = selection.join(" ")
  const followUpDocument = connectionQuery(
    `${pascal(parent.name)}${pascal(spec.field)}Page`,
    parent.connection,
    `id ${spec.field}(first: $childFirst, offset: $childOffset) { nodes { ${inner} } }`,
    ["$childFirst: Int!", "$childOffset: Int!"]
  )
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
      followUpDocument
    },
    selection: `${spec.field}(first: $${firstVariable}) { nodes { ${inner} } }`
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
  const all = Schema.Struct(spec.fields)
  const { columns, selection } = derive((all.ast as AST.TypeLiteral).propertySignatures, nodeType, [], false, excluded)
  const children = (spec.children ?? []).filter((c) => !excluded.has(c.field)).map((c) => defineChild(spec, c))
  const withCustomFields = spec.customFields === true && !excluded.has("customFields")
  const nodeSelection = [...selection, ...children.map((c) => c.selection), ...(withCustomFields ? [customFieldsSelection] : [])].join(" ")
  const childVariables = children.map((c) => `$${c.child.firstVariable}: Int!`)
  const hasUpdatedAt = "updatedAt" in spec.fields
  const operation = pascal(spec.name)
  return {
    name: spec.name,
    table: spec.table ?? snake(spec.connection),
    connection: spec.connection,
    nodeType: spec.nodeType,
    node: node as unknown as Schema.Schema<Schema.Struct.Type<Fields> & { readonly id: string }, any>,
    columns,
    children: children.map((c) => c.child),
    customFields: withCustomFields ? spec.nodeType : undefined,
    document: connectionQuery(`${operation}Page`, spec.connection, nodeSelection, childVariables),
    idsDocument: connectionQuery(`${operation}Ids`, spec.connection, "id"),
    countDocument: countQuery(`${operation}Count`, spec.connection),
    connectionPath: [spec.connection],
    maxPageSize: spec.maxPageSize ?? 100,
    fullPass: spec.fullPass,
    partitions: spec.partitions ?? [{}],
    incremental: spec.incremental,
    fullPassEvery: spec.fullPassEvery,
    updatedAt: hasUpdatedAt ? (n) => (n as unknown as { readonly updatedAt: string }).updatedAt : undefined,
    lookup: spec.lookup,
    topic: spec.topic,
    refetch: spec.refetch ?? (spec.lookup ? byIds(spec.lookup) : undefined),
    spec
  }
}

/** The same stream with `exclude` left out (configuration: SYNC_EXCLUDE_FIELDS). */
export const excluding = (stream: AnyStream, exclude: ReadonlyArray<string>): AnyStream => (exclude.length === 0 ? stream : define(stream.spec, exclude))

/** Every table a stream writes: its own and its children's (custom fields aside). */
export const tablesOf = (stream: AnyStream): ReadonlyArray<string> => [stream.table, ...stream.children.map((c) => c.table)]

import { type DocumentNode, getNamedType, type GraphQLNamedType, isObjectType, parse } from "graphql"
import { type Duration, Option, Schema, SchemaAST as AST } from "effect"
import { serviceSchema } from "../../api/serviceSchema.js"
import type { Incremental } from "../Incremental.js"
import type { Variables } from "../model.js"
import { EmbeddedAnnotation, LinkAnnotation } from "./fields.js"

/** Postgres types a mapped column can have; the Warehouse takes each column out of the node JSON as that type. */
export type ColumnType = "text" | "integer" | "double precision" | "boolean" | "timestamptz" | "jsonb"

export interface Column {
  /** Where the value is in the node, e.g. ["jobNumber"], ["client", "id"], ["amounts", "total"]. */
  readonly path: ReadonlyArray<string>
  /** Column of the stream's table (snake_case of the path; a link is `<field>_id`). */
  readonly column: string
  readonly type: ColumnType
  readonly nullable: boolean
  /** For a link column: the stream the id belongs to. */
  readonly link?: string
  /** The schema's description of the field. */
  readonly description?: string
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
  /** Variables of a full pass: an order that does not move when rows change (new rows may append). */
  readonly fullPass: Variables
  readonly incremental: Incremental
  /** How often a full pass runs (default: SYNC_FULL_PASS_EVERY). */
  readonly fullPassEvery?: Duration.Duration
  /** Variables that select exactly these rows, when the connection filters by id (`{ filter: { ids } }`). */
  readonly lookup?: (ids: ReadonlyArray<string>) => Variables
  /** The largest `first` the service accepts (100). */
  readonly maxPageSize?: number
}

/**
 * A stream: a value that carries its data (node Schema, columns, table, document) and its behaviour (how a full
 * and an incremental pass page). Pager, Warehouse and the runner ask it what to do; none switches on its name.
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
  /** The page query: `$first: Int!`, `$offset: Int!`, and `$sort`/`$filter` where the connection has them. */
  readonly document: DocumentNode
  /** The same pages with nothing but each node's id (a listing to check a pass against, at a point a row). */
  readonly idsDocument: DocumentNode
  /** The number of rows in the connection (`$filter` where it has one). */
  readonly countDocument: DocumentNode
  /** Variables that select exactly these rows (an `ids` filter), when the connection has one. */
  readonly lookup: ((ids: ReadonlyArray<string>) => Variables) | undefined
  /** Where the connection is in `data`. */
  readonly connectionPath: ReadonlyArray<string>
  readonly maxPageSize: number
  readonly fullPass: Variables
  readonly incremental: Incremental
  readonly fullPassEvery: Duration.Duration | undefined
  /** The node's last-update time (ISO 8601, service time), when the type has one: feeds the high-water mark. */
  readonly updatedAt: ((node: Node) => string) | undefined
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

const graphqlField = (type: GraphQLNamedType | undefined, name: string, where: string) => {
  if (type === undefined || !isObjectType(type)) throw new Error(`stream field ${where}: ${type?.name ?? "the type"} is not an object type of the schema`)
  const field = type.getFields()[name]
  if (field === undefined) throw new Error(`stream field ${where}: ${type.name} has no field \`${name}\` in the schema subset`)
  return field
}

/** The columns and the GraphQL selection of a node's fields (an embedded object recurses with a prefix). */
const derive = (
  fields: ReadonlyArray<AST.PropertySignature>,
  type: GraphQLNamedType | undefined,
  prefix: ReadonlyArray<string>,
  parentNullable: boolean
): { readonly columns: ReadonlyArray<Column>; readonly selection: string } => {
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
    const { ast, nullable: ownNullable } = unwrapNull(ps.type)
    const nullable = parentNullable || ownNullable || ps.isOptional
    const description = gql.description ?? undefined
    if (hasAnnotation(ast, LinkAnnotation)) {
      const target = Option.getOrThrow(AST.getAnnotation<string>(ast, LinkAnnotation))
      columns.push({ path: [...path, "id"], column: `${path.map(snake).join("_")}_id`, type: "text", nullable, link: target, ...(description ? { description } : {}) })
      selection.push(`${name} { id }`)
    } else if (hasAnnotation(ast, EmbeddedAnnotation) && ast._tag === "TypeLiteral") {
      const inner = derive(ast.propertySignatures, getNamedType(gql.type), path, nullable)
      columns.push(...inner.columns)
      selection.push(`${name} { ${inner.selection} }`)
    } else {
      columns.push({ path, column: path.map(snake).join("_"), type: scalarType(ast, where), nullable, ...(description ? { description } : {}) })
      selection.push(`${name} ${wholeSelection(ast)}`.trim())
    }
  }
  return { columns, selection: selection.join(" ") }
}

const pascal = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())

/** The root field's own arguments a stream's queries pass through as variables: its order and its filter. */
const passedArguments = (connection: string) => {
  const root = graphqlField(serviceSchema().getQueryType() ?? undefined, connection, `(root) ${connection}`)
  return ["sort", "filter"].flatMap((arg) => {
    const a = root.args.find((x) => x.name === arg)
    return a ? [{ name: arg, type: String(a.type) }] : []
  })
}

/**
 * A query over the stream's connection: `first` rows from position `offset` (positions, not cursors: a pass checks
 * that each page joins the rows it already has, whatever the service's cursors are), in the order and filter of the
 * pass, selecting `selection` of each node. No pageInfo: a page shorter than `first` is the last (pageInfo would cost
 * its fields once per row slot).
 */
const connectionQuery = (operation: string, connection: string, selection: string): DocumentNode => {
  const passed = passedArguments(connection)
  const declared = ["$first: Int!", "$offset: Int!", ...passed.map((a) => `$${a.name}: ${a.type}`)].join(", ")
  const args = ["first: $first", "offset: $offset", ...passed.map((a) => `${a.name}: $${a.name}`)].join(", ")
  return parse(`query ${operation}(${declared}) { ${connection}(${args}) { nodes { ${selection} } } }`)
}

/** How many rows the connection holds in the pass's filter (`first: 1`: the cheapest page that carries the count). */
const countQuery = (operation: string, connection: string): DocumentNode => {
  const filter = passedArguments(connection).find((a) => a.name === "filter")
  return parse(
    filter
      ? `query ${operation}($filter: ${filter.type}) { ${connection}(first: 1, filter: $filter) { totalCount } }`
      : `query ${operation} { ${connection}(first: 1) { totalCount } }`
  )
}

/** A stream from its spec: node Schema, columns, selection and document derived from `fields`, checked against the schema. */
export const define = <Fields extends Schema.Struct.Fields & { readonly id: Schema.Schema<string, string, never> }>(
  spec: StreamSpec<Fields>
): StreamDefinition<Schema.Struct.Type<Fields> & { readonly id: string }> => {
  const node = Schema.Struct(spec.fields)
  const nodeType = serviceSchema().getType(spec.nodeType)
  if (nodeType === undefined) throw new Error(`stream ${spec.name}: the schema subset has no type ${spec.nodeType}`)
  const { columns, selection } = derive((node.ast as AST.TypeLiteral).propertySignatures, nodeType, [], false)
  const hasUpdatedAt = "updatedAt" in spec.fields
  return {
    name: spec.name,
    table: spec.table ?? snake(spec.connection),
    connection: spec.connection,
    nodeType: spec.nodeType,
    node: node as unknown as Schema.Schema<Schema.Struct.Type<Fields> & { readonly id: string }, any>,
    columns,
    document: connectionQuery(`${pascal(spec.name)}Page`, spec.connection, selection),
    idsDocument: connectionQuery(`${pascal(spec.name)}Ids`, spec.connection, "id"),
    countDocument: countQuery(`${pascal(spec.name)}Count`, spec.connection),
    lookup: spec.lookup,
    connectionPath: [spec.connection],
    maxPageSize: spec.maxPageSize ?? 100,
    fullPass: spec.fullPass,
    incremental: spec.incremental,
    fullPassEvery: spec.fullPassEvery,
    updatedAt: hasUpdatedAt ? (n) => (n as unknown as { readonly updatedAt: string }).updatedAt : undefined
  }
}

import { type GraphQLField, type GraphQLNamedType, getNamedType, isObjectType } from "graphql"
import { Option, Schema, SchemaAST as AST } from "effect"
import { columnDescription } from "./descriptions.js"
import { EmbeddedAnnotation, LinkAnnotation } from "./fields.js"

/**
 * A node Schema's columns and GraphQL selection: a scalar field is a column of its Postgres type, a link
 * (`client { id }`) a `client_id` column, an embedded value object a `<field>_<inner>` column per inner field.
 */

/**
 * Postgres types a mapped column can have; the Warehouse takes each column out of the node JSON as that type. A
 * number the service sends is `numeric`, exactly as sent (money, quantities, rates); coordinates are `double
 * precision` wherever they are, sent as numbers or as strings.
 */
export type ColumnType = "text" | "integer" | "numeric" | "double precision" | "boolean" | "timestamptz" | "jsonb"

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

export const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

const hasAnnotation = (ast: AST.AST, id: symbol) => Option.isSome(AST.getAnnotation(ast, id))

/** A nullable or optional field's inner type (`NullOr(X)`, `optional(X)` -> X, nullable), else the type itself. */
const unwrapNull = (ast: AST.AST): { readonly ast: AST.AST; readonly nullable: boolean } => {
  if (ast._tag === "Union") {
    const rest = ast.types.filter((t) => !(t._tag === "Literal" && t.literal === null) && t._tag !== "UndefinedKeyword")
    if (rest.length === 1 && rest.length < ast.types.length) return { ast: rest[0]!, nullable: true }
  }
  return { ast, nullable: false }
}

const scalarType = (ast: AST.AST, where: string): ColumnType => {
  const identifier = Option.getOrUndefined(AST.getIdentifierAnnotation(ast))
  if (identifier === "Coordinate" || identifier === "CoordinateText") return "double precision"
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
      return "numeric"
    case "BooleanKeyword":
      return "boolean"
    case "Literal":
      return typeof ast.literal === "string" ? "text" : typeof ast.literal === "number" ? "numeric" : "boolean"
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

export const graphqlField = (type: GraphQLNamedType | undefined | null, name: string, where: string): GraphQLField<unknown, unknown> => {
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
    const description = columnDescription(type!.name, name, gql.description ?? undefined)
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

/**
 * The columns and the selection of the fields of a node of `nodeType` (checked against the schema), `excluded` (paths
 * like `amounts` or `client`) left unselected: their columns stay, null.
 */
export const deriveColumns = (
  fields: Schema.Struct.Fields,
  nodeType: GraphQLNamedType | undefined,
  excluded: ReadonlySet<string> = new Set()
): { readonly columns: ReadonlyArray<Column>; readonly selection: ReadonlyArray<string> } =>
  derive((Schema.Struct(fields).ast as AST.TypeLiteral).propertySignatures, nodeType, [], false, excluded)

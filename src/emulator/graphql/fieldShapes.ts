import { type GraphQLField, getNamedType, isLeafType, isListType, isNonNullType, isObjectType, type GraphQLObjectType, type GraphQLOutputType } from "graphql"

/** Schema fields and types classified once, for the executor's walk (graphql-js's type predicates are slow outside production mode). */

/** Fields that cost nothing themselves: a connection's `nodes`, `edges` and `node`, and `__typename`. */
export const freeFields: ReadonlySet<string> = new Set(["nodes", "edges", "node", "__typename"])

export type Shape =
  | { readonly kind: "nonNull"; readonly of: Shape }
  | { readonly kind: "list"; readonly of: Shape }
  | { readonly kind: "leaf" }
  | { readonly kind: "object"; readonly type: GraphQLObjectType }
  | { readonly kind: "abstract"; readonly name: string }

const shapes = new Map<GraphQLOutputType, Shape>()
const shapeOf = (type: GraphQLOutputType): Shape => {
  let shape = shapes.get(type)
  if (shape === undefined) {
    shape = isNonNullType(type)
      ? { kind: "nonNull", of: shapeOf(type.ofType) }
      : isListType(type)
        ? { kind: "list", of: shapeOf(type.ofType) }
        : isLeafType(type)
          ? { kind: "leaf" }
          : isObjectType(type)
            ? { kind: "object", type }
            : { kind: "abstract", name: (type as { name: string }).name }
    shapes.set(type, shape)
  }
  return shape
}

export interface FieldInfo {
  readonly def: GraphQLField<unknown, unknown>
  readonly shape: Shape
  readonly nonNull: boolean
  /** The named type, when an object type. */
  readonly objectType: GraphQLObjectType | undefined
  readonly connection: boolean
  readonly free: boolean
}

const fieldInfos = new Map<GraphQLField<unknown, unknown>, FieldInfo>()
export const fieldInfo = (def: GraphQLField<unknown, unknown>): FieldInfo => {
  let info = fieldInfos.get(def)
  if (info === undefined) {
    const named = getNamedType(def.type)
    info = {
      def,
      shape: shapeOf(def.type),
      nonNull: isNonNullType(def.type),
      objectType: isObjectType(named) ? named : undefined,
      connection: named.name.endsWith("Connection"),
      free: freeFields.has(def.name)
    }
    fieldInfos.set(def, info)
  }
  return info
}

import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  type GraphQLNamedType,
  type GraphQLSchema,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValueNode
} from "graphql"
import { serviceSchema } from "./serviceSchema.js"

/** Fields that are structure, not data: free themselves, their children still count. */
const structural = new Set(["nodes", "edges", "node", "__typename"])

/** Page size the service assumes for a connection asked without `first`/`last`. */
export const defaultConnectionSize = 100

const intArgument = (value: ValueNode | undefined, variables: Readonly<Record<string, unknown>>): number | undefined => {
  if (value === undefined) return undefined
  if (value.kind === Kind.INT) return Number(value.value)
  if (value.kind === Kind.VARIABLE) {
    const v = variables[value.name.value]
    return typeof v === "number" ? v : undefined
  }
  return undefined
}

/**
 * The service's static cost of a query, computed the way the service computes `requestedQueryCost`:
 * a field of a `...Connection` type costs 1 + m * (cost of its children), m = first ?? last ?? 100;
 * `nodes`, `edges`, `node` and `__typename` cost nothing themselves; every other field costs 1 + its children.
 */
export const estimateQueryCost = (
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> = {},
  schema: GraphQLSchema = serviceSchema()
): number => {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)

  const costOf = (selectionSet: SelectionSetNode, parent: GraphQLNamedType): number => {
    let total = 0
    for (const selection of selectionSet.selections) {
      switch (selection.kind) {
        case Kind.FIELD: {
          const name = selection.name.value
          if (name === "__typename") break
          const definition = isObjectType(parent) ? parent.getFields()[name] : undefined
          const type = definition ? getNamedType(definition.type) : undefined
          const children = selection.selectionSet && type ? costOf(selection.selectionSet, type) : 0
          if (structural.has(name)) {
            total += children
          } else if (type?.name.endsWith("Connection")) {
            const arg = (n: string) => intArgument(selection.arguments?.find((a) => a.name.value === n)?.value, variables)
            const m = arg("first") ?? arg("last") ?? defaultConnectionSize
            total += 1 + m * children
          } else {
            total += 1 + children
          }
          break
        }
        case Kind.INLINE_FRAGMENT: {
          const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent
          total += costOf(selection.selectionSet, condition ?? parent)
          break
        }
        case Kind.FRAGMENT_SPREAD: {
          const fragment = fragments.get(selection.name.value)
          if (fragment) total += costOf(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parent)
          break
        }
      }
    }
    return total
  }

  let total = 0
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue
    const root = d.operation === "mutation" ? schema.getMutationType() : schema.getQueryType()
    if (root) total += costOf(d.selectionSet, root)
    break
  }
  return total
}

/**
 * `estimateQueryCost` computed once per document and numeric variables (the only ones it reads: `first`, `last`):
 * every page of a stream asks for it several times (page size search, reservation, learning, the re-ask bound).
 */
const staticCosts = new WeakMap<DocumentNode, Map<string, number>>()
export const staticQueryCost = (document: DocumentNode, variables: Readonly<Record<string, unknown>>): number => {
  let byNumbers = staticCosts.get(document)
  if (byNumbers === undefined) staticCosts.set(document, (byNumbers = new Map()))
  let key = ""
  for (const name in variables) if (typeof variables[name] === "number") key += `${name}=${variables[name]};`
  let cost = byNumbers.get(key)
  if (cost === undefined) byNumbers.set(key, (cost = estimateQueryCost(document, variables)))
  return cost
}

import {
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, getNamedType, type GraphQLObjectType, type GraphQLSchema,
  isObjectType, Kind, type OperationDefinitionNode, type SelectionSetNode, valueFromASTUntyped
} from "graphql"

/**
 * Query cost, exactly (so a client can mirror it):
 * - `nodes`, `edges`, `node` and `__typename` cost 0 themselves; their children still count;
 * - a field whose type is a `...Connection` costs 1 + m * cost(children), with m = first ?? last ?? 100 (requested)
 *   or the number of nodes it actually returned (actual);
 * - any other field costs 1 + cost(children).
 * Fragments count as if their fields were written inline.
 */

const free = new Set(["nodes", "edges", "node", "__typename"])
export const DEFAULT_CONNECTION_SIZE = 100

export interface CostRequest {
  readonly schema: GraphQLSchema
  readonly document: DocumentNode
  readonly operationName?: string | null | undefined
  readonly variables?: Record<string, unknown> | null | undefined
}

export const selectOperation = (document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined => {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined
}

/** The value of a field argument, with variables (and their defaults) substituted. */
export const argumentValue = (field: FieldNode, name: string, variables: Record<string, unknown>): unknown => {
  const arg = field.arguments?.find((a) => a.name.value === name)
  return arg ? valueFromASTUntyped(arg.value, variables) : undefined
}

export const variablesWithDefaults = (op: OperationDefinitionNode, given: Record<string, unknown> | null | undefined): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const v of op.variableDefinitions ?? []) {
    const name = v.variable.name.value
    if (given && name in given) out[name] = given[name]
    else if (v.defaultValue) out[name] = valueFromASTUntyped(v.defaultValue, {})
  }
  return out
}

/**
 * The cost of the request's operation. `returned` given: the actual cost, with each connection's m read from it
 * (keyed by response path, e.g. "jobs" or "a.jobs"; a connection that returned nothing counts 0 nodes).
 */
export const queryCost = (request: CostRequest, returned?: ReadonlyMap<string, number>): number => {
  const op = selectOperation(request.document, request.operationName)
  if (!op) return 0
  const root = op.operation === "mutation" ? request.schema.getMutationType() : request.schema.getQueryType()
  if (!root) return 0
  const variables = variablesWithDefaults(op, request.variables)
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of request.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)

  const costOf = (set: SelectionSetNode, parent: GraphQLObjectType, path: string, seen: ReadonlySet<string>): number => {
    let total = 0
    for (const sel of set.selections) {
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const frag = fragments.get(sel.name.value)
        if (!frag || seen.has(frag.name.value)) continue
        const t = request.schema.getType(frag.typeCondition.name.value)
        total += costOf(frag.selectionSet, isObjectType(t) ? t : parent, path, new Set([...seen, frag.name.value]))
        continue
      }
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? request.schema.getType(sel.typeCondition.name.value) : parent
        total += costOf(sel.selectionSet, isObjectType(t) ? t : parent, path, seen)
        continue
      }
      const name = sel.name.value
      if (name === "__typename") continue
      const def = parent.getFields()[name]
      if (!def) continue
      const key = path ? `${path}.${sel.alias?.value ?? name}` : (sel.alias?.value ?? name)
      const named = getNamedType(def.type)
      const children = sel.selectionSet && isObjectType(named) ? costOf(sel.selectionSet, named, key, seen) : 0
      if (free.has(name)) total += children
      else if (named.name.endsWith("Connection")) {
        const m = returned
          ? (returned.get(key) ?? 0)
          : numberOr(argumentValue(sel, "first", variables), numberOr(argumentValue(sel, "last", variables), DEFAULT_CONNECTION_SIZE))
        total += 1 + m * children
      } else total += 1 + children
    }
    return total
  }
  return costOf(op.selectionSet, root, "", new Set())
}

const numberOr = (value: unknown, fallback: number): number => (typeof value === "number" && Number.isFinite(value) ? Math.max(0, value) : fallback)

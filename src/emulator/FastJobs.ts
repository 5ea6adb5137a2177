import {
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, getArgumentValues, getVariableValues, type GraphQLSchema, Kind,
  type OperationDefinitionNode, type SelectionSetNode
} from "graphql"
import { type JobsConnection } from "./JobsResolver.js"

/**
 * A fast path for the shape connectors send on every page, `query { jobs(...) { nodes { <Job scalars> } pageInfo { ... } } }`:
 * the same answer graphql-js would give (same keys, order and values), without its per-field machinery, so a
 * million-row backfill is not limited by the emulator. Anything else (client, edges, totalCount, aliases on the
 * connection's fields, directives, several root fields) returns undefined and takes the graphql-js path.
 */

type Projection = ReadonlyArray<readonly [responseKey: string, fieldName: string]>

export interface FastPlan {
  readonly rootKey: string
  readonly field: FieldNode
  readonly parts: ReadonlyArray<{ readonly key: string; readonly kind: "nodes" | "pageInfo" | "__typename"; readonly fields: Projection }>
}

const pageInfoFields = new Set(["hasNextPage", "endCursor", "hasPreviousPage", "startCursor", "__typename"])

export const compileFastPlan = (schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): FastPlan | undefined => {
  if (operation.operation !== "query" || operation.directives?.length) return undefined
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
  const jobFields = schema.getType("Job") as { getFields(): Record<string, { type: unknown; args: ReadonlyArray<unknown> }> } | undefined
  if (!jobFields) return undefined
  const jobScalar = (name: string) => {
    if (name === "__typename") return true
    const def = jobFields.getFields()[name]
    return def !== undefined && def.args.length === 0 && name !== "client"
  }

  /** The fields of a selection set, fragments expanded (type condition `typeName` only), or undefined to bail. */
  const flatten = (set: SelectionSetNode, typeName: string, seen: Set<string>): Array<FieldNode> | undefined => {
    const out: Array<FieldNode> = []
    for (const sel of set.selections) {
      if (sel.directives?.length) return undefined
      if (sel.kind === Kind.FIELD) out.push(sel)
      else {
        const frag = sel.kind === Kind.FRAGMENT_SPREAD ? fragments.get(sel.name.value) : sel
        if (!frag || (frag.typeCondition && frag.typeCondition.name.value !== typeName)) return undefined
        if (frag.directives?.length) return undefined
        if (sel.kind === Kind.FRAGMENT_SPREAD) {
          if (seen.has(sel.name.value)) continue
          seen.add(sel.name.value)
        }
        const inner = flatten(frag.selectionSet, typeName, seen)
        if (!inner) return undefined
        out.push(...inner)
      }
    }
    return out
  }

  const project = (set: SelectionSetNode | undefined, typeName: string, allowed: (name: string) => boolean): Projection | undefined => {
    if (!set) return undefined
    const fields = flatten(set, typeName, new Set())
    if (!fields) return undefined
    const byKey = new Map<string, string>()
    for (const f of fields) {
      if (f.selectionSet || f.arguments?.length || !allowed(f.name.value)) return undefined
      const key = f.alias?.value ?? f.name.value
      if (!byKey.has(key)) byKey.set(key, f.name.value)
    }
    return [...byKey]
  }

  const root = flatten(operation.selectionSet, "Query", new Set())
  if (!root || root.length !== 1 || root[0]!.name.value !== "jobs" || !root[0]!.selectionSet) return undefined
  const field = root[0]!
  const connection = flatten(field.selectionSet!, "JobConnection", new Set())
  if (!connection) return undefined
  const parts: Array<FastPlan["parts"][number]> = []
  const keys = new Set<string>()
  for (const f of connection) {
    const key = f.alias?.value ?? f.name.value
    if (keys.has(key) || f.arguments?.length) return undefined
    keys.add(key)
    if (f.name.value === "nodes") {
      const fields = project(f.selectionSet, "Job", jobScalar)
      if (!fields) return undefined
      parts.push({ key, kind: "nodes", fields })
    } else if (f.name.value === "pageInfo") {
      const fields = project(f.selectionSet, "PageInfo", (n) => pageInfoFields.has(n))
      if (!fields) return undefined
      parts.push({ key, kind: "pageInfo", fields })
    } else if (f.name.value === "__typename") parts.push({ key, kind: "__typename", fields: [] })
    else return undefined
  }
  return { rootKey: field.alias?.value ?? "jobs", field, parts }
}

/** The `jobs` field's arguments as graphql-js would coerce them, or undefined when the variables are invalid. */
export const fastArguments = (
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  plan: FastPlan,
  variables: Record<string, unknown> | null | undefined
): Record<string, unknown> | undefined => {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {})
  if (coerced.errors) return undefined
  const def = schema.getQueryType()!.getFields().jobs!
  try {
    return getArgumentValues(def, plan.field, coerced.coerced)
  } catch {
    return undefined
  }
}

export const fastResult = (plan: FastPlan, connection: JobsConnection): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const part of plan.parts) {
    if (part.kind === "__typename") out[part.key] = "JobConnection"
    else if (part.kind === "pageInfo") {
      const info: Record<string, unknown> = {}
      const source = connection.pageInfo as Record<string, unknown>
      for (const [key, name] of part.fields) info[key] = name === "__typename" ? "PageInfo" : source[name]
      out[part.key] = info
    } else {
      out[part.key] = connection.nodes.map((job) => {
        const node: Record<string, unknown> = {}
        for (const [key, name] of part.fields) node[key] = name === "__typename" ? "Job" : (job[name] ?? null)
        return node
      })
    }
  }
  return { [plan.rootKey]: out }
}

import { type FieldNode, GraphQLError, isObjectType, type GraphQLObjectType, type GraphQLSchema, getVariableValues } from "graphql"
import { FieldError } from "./collectionQuery.js"
import { ConnectionValue } from "./ConnectionValue.js"
import type { ExecutionInput, ExecutionOutput } from "./ExecutionInput.js"
import { fieldInfo, freeFields, type Shape } from "./fieldShapes.js"
import { FieldResolver } from "./FieldResolver.js"
import { type Collected, Selections } from "./Selections.js"

/**
 * Executes a validated operation over an account's world: every collection root field, links to other records (an
 * `{ id }` costs nothing more; any other field reads the linked record), value objects, custom fields (unions by
 * `__typename`), line items as a connection per parent, fragments, aliases, `@skip` and `@include`. It computes the
 * actual query cost while it walks the answer: a connection costs 1 plus, per node it returned, its nodes' fields
 * (nested connections by their own answers) and its `pageInfo` and `totalCount` fields; `nodes`, `edges`, `node`
 * and `__typename` cost nothing themselves; any other field costs 1 plus its selection (a plain list: its costliest
 * element). That is never above the requested cost (QueryCost.ts), which takes `first` for every connection.
 *
 * It replaces graphql-js's executor for this API because a backfill asks for millions of nodes: graphql-js's
 * per-field promises and resolver calls made the emulator, not the connector, the bottleneck. What a selection asks
 * is Selections.ts; what a field's value is, FieldResolver.ts; this completes the values and counts the cost.
 */

export type { ExecutionInput, ExecutionOutput, RootResolver } from "./ExecutionInput.js"

/** Null reaching a non-null position: it goes up to the nearest nullable field. */
const BUBBLE = Symbol("null bubbles up")

/** Runs a validated operation: its variables coerced first, then its root fields. */
export const executeOperation = (input: ExecutionInput): ExecutionOutput => {
  const { schema, operation } = input
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], input.variables ?? {})
  if (coerced.errors) return { errors: coerced.errors.map((e) => e.toJSON() as unknown as Record<string, unknown>), cost: 0 }
  const rootType = operation.operation === "mutation" ? schema.getMutationType() : schema.getQueryType()
  if (!rootType) return { errors: [{ message: `the schema has no ${operation.operation} type` }], cost: 0 }
  return new Execution(input, coerced.coerced).run(rootType)
}

/** One operation's walk: what it selected, the errors met and the cost counted so far. */
class Execution {
  private readonly schema: GraphQLSchema
  private readonly selections: Selections
  private readonly resolver: FieldResolver
  private readonly errors: Array<Record<string, unknown>> = []
  private cost = 0

  constructor(
    private readonly input: ExecutionInput,
    variables: Record<string, unknown>
  ) {
    this.schema = input.schema
    this.selections = new Selections(input.schema, input.document, variables)
    this.resolver = new FieldResolver(input, this.selections)
  }

  run(rootType: GraphQLObjectType): ExecutionOutput {
    let data: Record<string, unknown> | null
    try {
      data = this.executeFields(rootType, undefined, this.selections.collect(this.input.operation.selectionSet, rootType), [], 1)
    } catch (e) {
      if (e !== BUBBLE) throw e
      data = null
    }
    return { data, ...(this.errors.length > 0 ? { errors: this.errors } : {}), cost: this.cost }
  }

  /**
   * The fields of an object: each resolved and completed, an error recorded at its path (null in its place, or up
   * to the nearest nullable field). Each field that is neither free nor a connection costs 1; `multiplier` counts
   * the whole selection that many times (a connection's `pageInfo` and `totalCount`, once per node it returned).
   */
  private executeFields(type: GraphQLObjectType, parent: unknown, fields: Collected, path: Array<string | number>, multiplier: number): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    const defs = type.getFields()
    for (const [key, nodes] of fields) {
      const fieldName = nodes[0]!.name.value
      if (fieldName === "__typename") {
        out[key] = type.name
        continue
      }
      const info = fieldInfo(defs[fieldName]!)
      path.push(key)
      const before = this.cost
      try {
        out[key] = this.completeValue(info.shape, nodes, this.resolver.resolve(type, parent, info, nodes), path)
      } catch (e) {
        if (e !== BUBBLE && !(e instanceof FieldError) && !(e instanceof GraphQLError)) throw e
        if (e !== BUBBLE) this.recordError(e, nodes, path)
        if (info.nonNull) throw BUBBLE
        out[key] = null
      } finally {
        path.pop()
      }
      if (!info.free && !info.connection) this.cost += 1
      if (multiplier !== 1) this.cost = before + (this.cost - before) * multiplier
    }
    return out
  }

  private recordError(e: FieldError | GraphQLError, nodes: ReadonlyArray<FieldNode>, path: ReadonlyArray<string | number>): void {
    const extensions = e instanceof FieldError ? { code: e.code, ...e.extra } : (e.extensions ?? {})
    this.errors.push(new GraphQLError(e.message, { nodes, path: [...path], extensions }).toJSON() as unknown as Record<string, unknown>)
  }

  /** A resolved value completed as its type says: non-null, list, leaf, or an object (a connection, an abstract type's member). */
  private completeValue(shape: Shape, nodes: ReadonlyArray<FieldNode>, value: unknown, path: Array<string | number>): unknown {
    if (shape.kind === "nonNull") {
      const v = this.completeValue(shape.of, nodes, value, path)
      if (v === null) throw BUBBLE
      return v
    }
    if (value === null || value === undefined) return null
    if (shape.kind === "leaf") return value
    if (shape.kind === "list") return this.completeList(shape.of, nodes, value as ReadonlyArray<unknown>, path)
    const objectType = shape.kind === "abstract" ? this.memberType(shape.name, value) : shape.type
    const fields = this.selections.collectAll(nodes, objectType)
    if (value instanceof ConnectionValue) return this.completeConnection(objectType, value, fields, path)
    return this.executeFields(objectType, value, fields, path, 1)
  }

  /** A list: a connection's nodes and edges each cost what they hold; any other list, its costliest element. */
  private completeList(element: Shape, nodes: ReadonlyArray<FieldNode>, list: ReadonlyArray<unknown>, path: Array<string | number>): Array<unknown> {
    const out: Array<unknown> = []
    const before = this.cost
    let costliest = 0
    for (let k = 0; k < list.length; k++) {
      const at = this.cost
      path.push(k)
      out.push(this.completeValue(element, nodes, list[k], path))
      path.pop()
      costliest = Math.max(costliest, this.cost - at)
    }
    const field = nodes[0]!.name.value
    if (field !== "nodes" && field !== "edges") this.cost = before + costliest
    return out
  }

  /** The object type of a union or interface value (custom fields: by its `__typename`). */
  private memberType(abstractName: string, value: unknown): GraphQLObjectType {
    const typename = (value as { __typename?: unknown }).__typename
    const t = typeof typename === "string" ? this.schema.getType(typename) : undefined
    if (!isObjectType(t)) throw new FieldError(`the emulator cannot tell the type of a ${abstractName} value`, "INTERNAL_SERVER_ERROR")
    return t
  }

  /** 1, plus its nodes' own costs, plus `pageInfo` and `totalCount` once per node it returned. */
  private completeConnection(type: GraphQLObjectType, connection: ConnectionValue, fields: Collected, path: Array<string | number>): Record<string, unknown> {
    const perNode = fields.filter(([, nodes]) => freeFields.has(nodes[0]!.name.value))
    const perSlot = fields.filter(([, nodes]) => !freeFields.has(nodes[0]!.name.value))
    const a = this.executeFields(type, connection, perNode, path, 1)
    const b = this.executeFields(type, connection, perSlot, path, connection.size)
    this.cost += 1
    const out: Record<string, unknown> = {}
    for (const [key] of fields) out[key] = key in a ? a[key] : b[key]
    return out
  }
}

import {
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, getArgumentValues, getDirectiveValues, getNamedType, getVariableValues,
  GraphQLError, type GraphQLField, GraphQLIncludeDirective, isAbstractType, isLeafType, isListType, isNonNullType, isObjectType,
  type GraphQLObjectType, type GraphQLOutputType, type GraphQLSchema, GraphQLSkipDirective, Kind, type OperationDefinitionNode,
  type SelectionSetNode
} from "graphql"
import { CursorRejected, type Page } from "../data/Collection.js"
import type { Records, World } from "../data/World.js"
import type { PagingView } from "../PagingFaults.js"
import { collectionQuery, FieldError, pageWindow } from "./collectionQuery.js"

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
 * per-field promises and resolver calls made the emulator, not the connector, the bottleneck.
 */

export type RootResolver = (args: Record<string, unknown>) => unknown

export interface ExecutionInput {
  readonly schema: GraphQLSchema
  readonly document: DocumentNode
  readonly operation: OperationDefinitionNode
  readonly variables: Record<string, unknown> | null | undefined
  readonly world: World
  readonly maxPageSize: number
  /** Root fields that are not collections (account, mutations, webhook subscriptions). */
  readonly roots: Readonly<Record<string, RootResolver>>
  /** The scope a root field needs (absent: none); a missing one answers ACCESS_DENIED at the field. */
  readonly scopeOf: (rootField: string) => string | undefined
  readonly scopes: ReadonlySet<string>
  /** Nodes withheld from pages after paging, `offset` ignored (PagingFaults); absent: neither. */
  readonly paging?: PagingView
}

export interface ExecutionOutput {
  readonly data?: Record<string, unknown> | null
  readonly errors?: ReadonlyArray<Record<string, unknown>>
  readonly cost: number
}

/** Where a record object came from (so its line items and links can be read). */
const SOURCE: unique symbol = Symbol("record source")
interface Sourced {
  [SOURCE]?: { readonly records: Records; readonly index: number }
}

/** A connection's answer: nodes made on demand, cursors, page info, total count. */
export class ConnectionValue {
  private made: ReadonlyArray<unknown> | undefined
  constructor(
    private readonly items: ReadonlyArray<number>,
    private readonly make: (item: number) => unknown,
    private readonly cursorOf: (item: number) => string,
    readonly pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null },
    readonly totalCount: () => number
  ) {}

  /** `keep` leaves nodes out after paging: `pageInfo` and `totalCount` stay those of the page as paged. */
  static of(page: Page, make: (index: number) => unknown, keep?: (index: number) => boolean): ConnectionValue {
    const head = page.indices[0]
    const last = page.indices[page.indices.length - 1]
    return new ConnectionValue(keep === undefined ? page.indices : page.indices.filter(keep), make, page.cursorOf, {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: head === undefined ? null : page.cursorOf(head),
      endCursor: last === undefined ? null : page.cursorOf(last)
    }, page.totalCount)
  }

  /** A connection over a list held in memory (line items, subscriptions): offset cursors. */
  static ofList(
    list: ReadonlyArray<unknown>,
    args: Record<string, unknown>,
    where: string,
    maxPageSize: number,
    keep?: (item: unknown) => boolean
  ): ConnectionValue {
    const window = pageWindow(args, where, maxPageSize)
    let start = window.offset ?? 0
    if (window.offset === undefined && window.after !== undefined) {
      const text = Buffer.from(window.after, "base64").toString("utf8")
      if (!/^\d+$/.test(text)) throw new FieldError(`after: "${window.after.slice(0, 40)}" is not a cursor issued by this endpoint`, "INVALID_CURSOR", { argument: "after" })
      start = Number(text)
    }
    const items = Array.from({ length: Math.max(0, Math.min(window.first, list.length - start)) }, (_, k) => start + k)
    const cursorOf = (i: number) => Buffer.from(String(i + 1)).toString("base64")
    return new ConnectionValue(keep === undefined ? items : items.filter((i) => keep(list[i])), (i) => list[i], cursorOf, {
      hasNextPage: start + items.length < list.length,
      hasPreviousPage: start > 0 && list.length > 0,
      startCursor: items.length === 0 ? null : cursorOf(items[0]!),
      endCursor: items.length === 0 ? null : cursorOf(items[items.length - 1]!)
    }, () => list.length)
  }

  get nodes(): ReadonlyArray<unknown> {
    return (this.made ??= this.items.map(this.make))
  }

  get edges(): ReadonlyArray<{ cursor: string; node: unknown }> {
    const nodes = this.nodes
    return this.items.map((item, k) => ({ cursor: this.cursorOf(item), node: nodes[k] }))
  }

  get size(): number {
    return this.items.length
  }
}

/** Null reaching a non-null position: it goes up to the nearest nullable field. */
const BUBBLE = Symbol("null bubbles up")
const free = new Set(["nodes", "edges", "node", "__typename"])

type Collected = ReadonlyArray<readonly [responseKey: string, nodes: ReadonlyArray<FieldNode>]>

/** A field's type, classified once (graphql-js's type predicates are slow outside production mode). */
type Shape =
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

interface FieldInfo {
  readonly def: GraphQLField<unknown, unknown>
  readonly shape: Shape
  readonly nonNull: boolean
  /** The named type, when an object type. */
  readonly objectType: GraphQLObjectType | undefined
  readonly connection: boolean
  readonly free: boolean
}
const fieldInfos = new Map<GraphQLField<unknown, unknown>, FieldInfo>()
const fieldInfo = (def: GraphQLField<unknown, unknown>): FieldInfo => {
  let info = fieldInfos.get(def)
  if (info === undefined) {
    const named = getNamedType(def.type)
    info = {
      def,
      shape: shapeOf(def.type),
      nonNull: isNonNullType(def.type),
      objectType: isObjectType(named) ? named : undefined,
      connection: named.name.endsWith("Connection"),
      free: free.has(def.name)
    }
    fieldInfos.set(def, info)
  }
  return info
}

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
  private readonly world: World
  private readonly fragments = new Map<string, FragmentDefinitionNode>()
  private readonly errors: Array<Record<string, unknown>> = []
  private cost = 0
  private readonly collected = new Map<SelectionSetNode, Map<string, Collected>>()
  private readonly argumentValues = new Map<FieldNode, Record<string, unknown>>()
  private readonly wantedFields = new Map<FieldNode, ReadonlySet<string>>()

  constructor(
    private readonly input: ExecutionInput,
    private readonly variables: Record<string, unknown>
  ) {
    this.schema = input.schema
    this.world = input.world
    for (const d of input.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(d.name.value, d)
  }

  run(rootType: GraphQLObjectType): ExecutionOutput {
    let data: Record<string, unknown> | null
    try {
      data = this.executeFields(rootType, undefined, this.collect(this.input.operation.selectionSet, rootType), [], 1)
    } catch (e) {
      if (e !== BUBBLE) throw e
      data = null
    }
    return { data, ...(this.errors.length > 0 ? { errors: this.errors } : {}), cost: this.cost }
  }

  // ---- selections: fields, fragments, directives ------------------------------------------------------------

  /** `@skip` and `@include`. */
  private included(node: { readonly directives?: ReadonlyArray<unknown> | undefined } & Parameters<typeof getDirectiveValues>[1]): boolean {
    if (!node.directives || node.directives.length === 0) return true
    if (getDirectiveValues(GraphQLSkipDirective, node, this.variables)?.if === true) return false
    return getDirectiveValues(GraphQLIncludeDirective, node, this.variables)?.if !== false
  }

  /** Whether a fragment's type condition holds for a value of `type`. */
  private typeApplies(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (condition === undefined || condition === type.name) return true
    const t = this.schema.getType(condition)
    return t !== undefined && isAbstractType(t) && this.schema.isSubType(t, type)
  }

  /** The fields a selection set asks of a value of `type`, by response key (fragments spread, directives applied). */
  private collect(set: SelectionSetNode, type: GraphQLObjectType): Collected {
    let byType = this.collected.get(set)
    const cached = byType?.get(type.name)
    if (cached) return cached
    const out = new Map<string, Array<FieldNode>>()
    const visited = new Set<string>()
    const walk = (s: SelectionSetNode) => {
      for (const sel of s.selections) {
        if (!this.included(sel)) continue
        if (sel.kind === Kind.FIELD) {
          const key = sel.alias?.value ?? sel.name.value
          const list = out.get(key)
          if (list) list.push(sel)
          else out.set(key, [sel])
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          if (this.typeApplies(sel.typeCondition?.name.value, type)) walk(sel.selectionSet)
        } else {
          const frag = this.fragments.get(sel.name.value)
          if (!frag || visited.has(frag.name.value)) continue
          visited.add(frag.name.value)
          if (this.typeApplies(frag.typeCondition.name.value, type)) walk(frag.selectionSet)
        }
      }
    }
    walk(set)
    const collected: Collected = [...out]
    if (!byType) this.collected.set(set, (byType = new Map()))
    byType.set(type.name, collected)
    return collected
  }

  /** The fields the nodes of one response key ask of their value (the same key may be selected several times). */
  private collectAll(nodes: ReadonlyArray<FieldNode>, type: GraphQLObjectType): Collected {
    const sets: Array<SelectionSetNode> = []
    for (const n of nodes) if (n.selectionSet) sets.push(n.selectionSet)
    if (sets.length === 1) return this.collect(sets[0]!, type)
    const merged = new Map<string, Array<FieldNode>>()
    for (const s of sets) for (const [key, fields] of this.collect(s, type)) merged.set(key, [...(merged.get(key) ?? []), ...fields])
    return [...merged]
  }

  private argumentsOf(def: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> {
    let args = this.argumentValues.get(node)
    if (!args) this.argumentValues.set(node, (args = getArgumentValues(def, node, this.variables)))
    return args
  }

  // ---- resolving: root fields, links, line items ------------------------------------------------------------

  /** A collection root field (a page of its records), another root field the service answers, or an error. */
  private resolveRoot(info: FieldInfo, nodes: ReadonlyArray<FieldNode>, args: Record<string, unknown>): unknown {
    const name = info.def.name
    const scope = this.input.scopeOf(name)
    if (scope !== undefined && !this.input.scopes.has(scope)) {
      throw new FieldError(`Access denied: \`${name}\` requires the ${scope} scope, which was not granted to this app`, "ACCESS_DENIED", { scope })
    }
    const root = this.input.roots[name]
    if (root) return root(args)
    if (!this.world.has(name)) throw new FieldError(`\`${name}\` is not served by the emulator`, "FIELD_NOT_SUPPORTED", { field: name })
    const records = this.world.records(name)
    const query = collectionQuery(records, this.input.paging?.ignoreOffset ? { ...args, offset: undefined } : args, this.input.maxPageSize)
    let page: Page
    try {
      page = records.collection.page(query)
    } catch (e) {
      if (e instanceof CursorRejected) throw new FieldError(e.reason, "INVALID_CURSOR", { argument: "after" })
      throw e
    }
    const only = this.wantedOn(info, nodes, records)
    const withheld = this.input.paging?.withheld
    return ConnectionValue.of(page, (index) => recordObject(records, index, only), withheld && ((index) => !withheld(records.collection.idOf(index), index)))
  }

  /** The fields a collection field's selection reads on its nodes (through `nodes` or `edges { node }`): only those are drawn. */
  private wantedOn(info: FieldInfo, nodes: ReadonlyArray<FieldNode>, records: Records): ReadonlySet<string> | undefined {
    const cached = this.wantedFields.get(nodes[0]!)
    if (cached) return cached
    const connection = info.objectType
    const nodeType = this.schema.getType(records.def.nodeType)
    if (connection === undefined || !isObjectType(nodeType)) return undefined
    const wanted = new Set<string>()
    const add = (fields: ReadonlyArray<FieldNode>) => {
      for (const [, fs] of this.collectAll(fields, nodeType)) wanted.add(fs[0]!.name.value)
    }
    for (const [, fs] of this.collectAll(nodes, connection)) {
      const field = fs[0]!.name.value
      if (field === "nodes") add(fs)
      else if (field === "edges") {
        const edge = getNamedType(connection.getFields().edges!.type)
        if (!isObjectType(edge)) return undefined
        for (const [, es] of this.collectAll(fs, edge)) if (es[0]!.name.value === "node") add(es)
      }
    }
    this.wantedFields.set(nodes[0]!, wanted)
    return wanted
  }

  /** A field's value on its parent: a root field, a record's line items, a computed field, a link read through, or the value held. */
  private resolveField(parentType: GraphQLObjectType, parent: unknown, info: FieldInfo, nodes: ReadonlyArray<FieldNode>): unknown {
    const def = info.def
    const name = def.name
    if (parent === undefined) return this.resolveRoot(info, nodes, this.argumentsOf(def, nodes[0]!))
    const source = (parent as Sourced)[SOURCE]
    if (source !== undefined && info.connection) return this.lineItems(parentType, source, info, nodes)
    const value = (parent as Record<string, unknown>)[name]
    if (typeof value === "function") return (value as (args: Record<string, unknown>) => unknown)(this.argumentsOf(def, nodes[0]!))
    const linked = this.link(value, info, nodes)
    return linked === undefined ? value : linked
  }

  /** A record's line items, the one connection a node has. */
  private lineItems(parentType: GraphQLObjectType, source: NonNullable<Sourced[typeof SOURCE]>, info: FieldInfo, nodes: ReadonlyArray<FieldNode>): ConnectionValue {
    const name = info.def.name
    const where = `${parentType.name}.${name}`
    if (source.records.def.children?.field !== name) throw new FieldError(`\`${where}\` is not served by the emulator`, "FIELD_NOT_SUPPORTED", { field: where })
    const withheld = this.input.paging?.withheldChild
    return ConnectionValue.ofList(
      source.records.children(source.index),
      this.argumentsOf(info.def, nodes[0]!),
      `\`${where}\``,
      this.input.maxPageSize,
      withheld && ((item) => !withheld(String((item as { id?: unknown }).id)))
    )
  }

  /**
   * The linked record when `value` is a link (`{ id }` of a record of another collection) whose selection asks more
   * than its id; null when it is gone; undefined when `value` is no such link (it is answered as held).
   */
  private link(value: unknown, info: FieldInfo, nodes: ReadonlyArray<FieldNode>): Record<string, unknown> | null | undefined {
    const named = info.objectType
    if (value === null || typeof value !== "object" || named === undefined || Array.isArray(value)) return undefined
    if ((value as Sourced)[SOURCE] !== undefined || value instanceof ConnectionValue) return undefined
    const linked = this.world.recordsOfType(named.name)
    if (linked === undefined || this.onlyId(nodes, named)) return undefined
    const index = linked.collection.indexOfId(String((value as { id?: unknown }).id))
    return index === undefined ? null : recordObject(linked, index)
  }

  /** Whether the selection of a link reads nothing but its id. */
  private onlyId(nodes: ReadonlyArray<FieldNode>, type: GraphQLObjectType): boolean {
    return this.collectAll(nodes, type).every(([, fs]) => fs[0]!.name.value === "id" || fs[0]!.name.value === "__typename")
  }

  // ---- completing: objects, lists, connections, and their cost ----------------------------------------------

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
        out[key] = this.completeValue(info.shape, nodes, this.resolveField(type, parent, info, nodes), path)
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
    const fields = this.collectAll(nodes, objectType)
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
    const perNode = fields.filter(([, nodes]) => free.has(nodes[0]!.name.value))
    const perSlot = fields.filter(([, nodes]) => !free.has(nodes[0]!.name.value))
    const a = this.executeFields(type, connection, perNode, path, 1)
    const b = this.executeFields(type, connection, perSlot, path, connection.size)
    this.cost += 1
    const out: Record<string, unknown> = {}
    for (const [key] of fields) out[key] = key in a ? a[key] : b[key]
    return out
  }
}

/** A record as the executor hands it on: it remembers where it came from (its line items, its links). */
const recordObject = (records: Records, index: number, only?: ReadonlySet<string>): Record<string, unknown> => {
  const record = records.record(index, only) as Record<string, unknown> & Sourced
  record[SOURCE] = { records, index }
  return record
}

import { type FieldNode, getNamedType, isObjectType, type GraphQLObjectType } from "graphql"
import type { Page } from "../data/Collection.js"
import { CursorRejected } from "../data/cursors.js"
import type { Records } from "../data/Records.js"
import { collectionQuery, FieldError } from "./collectionQuery.js"
import { ConnectionValue, cursorError } from "./ConnectionValue.js"
import type { ExecutionInput } from "./ExecutionInput.js"
import type { FieldInfo } from "./fieldShapes.js"
import type { Selections } from "./Selections.js"

/** Where a record object came from (so its line items and links can be read). */
const SOURCE: unique symbol = Symbol("record source")
interface Sourced {
  [SOURCE]?: { readonly records: Records; readonly index: number }
}

/** A record as the executor hands it on: it remembers where it came from (its line items, its links). */
const recordObject = (records: Records, index: number, only?: ReadonlySet<string>): Record<string, unknown> => {
  const record = records.record(index, only) as Record<string, unknown> & Sourced
  record[SOURCE] = { records, index }
  return record
}

/**
 * A field's value on its parent, before it is completed: a root field (a page of a collection's records, or another
 * root field the service answers), a record's line items, a computed field, a link read through, or the value held.
 */
export class FieldResolver {
  private readonly wantedFields = new Map<FieldNode, ReadonlySet<string>>()

  constructor(
    private readonly input: ExecutionInput,
    private readonly selections: Selections
  ) {}

  resolve(parentType: GraphQLObjectType, parent: unknown, info: FieldInfo, nodes: ReadonlyArray<FieldNode>): unknown {
    const def = info.def
    const name = def.name
    if (parent === undefined) return this.resolveRoot(info, nodes, this.selections.argumentsOf(def, nodes[0]!))
    const source = (parent as Sourced)[SOURCE]
    if (source !== undefined && info.connection) return this.lineItems(parentType, source, info, nodes)
    const value = (parent as Record<string, unknown>)[name]
    if (typeof value === "function") return (value as (args: Record<string, unknown>) => unknown)(this.selections.argumentsOf(def, nodes[0]!))
    const linked = this.link(value, info, nodes)
    return linked === undefined ? value : linked
  }

  /** A collection root field (a page of its records), another root field the service answers, or an error. */
  private resolveRoot(info: FieldInfo, nodes: ReadonlyArray<FieldNode>, args: Record<string, unknown>): unknown {
    const name = info.def.name
    const scope = this.input.scopeOf(name)
    if (scope !== undefined && !this.input.scopes.has(scope)) {
      throw new FieldError(`Access denied: \`${name}\` requires the ${scope} scope, which was not granted to this app`, "ACCESS_DENIED", { scope })
    }
    const root = this.input.roots[name]
    if (root) return root(args)
    const world = this.input.world
    if (!world.has(name)) throw new FieldError(`\`${name}\` is not served by the emulator`, "FIELD_NOT_SUPPORTED", { field: name })
    const records = world.records(name)
    const query = collectionQuery(records, this.input.paging?.ignoreOffset ? { ...args, offset: undefined } : args, this.input.maxPageSize)
    let page: Page
    try {
      page = records.collection.page(query)
    } catch (e) {
      if (e instanceof CursorRejected) throw cursorError(e)
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
    const nodeType = this.input.schema.getType(records.def.nodeType)
    if (connection === undefined || !isObjectType(nodeType)) return undefined
    const wanted = new Set<string>()
    const add = (fields: ReadonlyArray<FieldNode>) => {
      for (const [, fs] of this.selections.collectAll(fields, nodeType)) wanted.add(fs[0]!.name.value)
    }
    for (const [, fs] of this.selections.collectAll(nodes, connection)) {
      const field = fs[0]!.name.value
      if (field === "nodes") add(fs)
      else if (field === "edges") {
        const edge = getNamedType(connection.getFields().edges!.type)
        if (!isObjectType(edge)) return undefined
        for (const [, es] of this.selections.collectAll(fs, edge)) if (es[0]!.name.value === "node") add(es)
      }
    }
    this.wantedFields.set(nodes[0]!, wanted)
    return wanted
  }

  /** A record's line items, the one connection a node has. */
  private lineItems(parentType: GraphQLObjectType, source: NonNullable<Sourced[typeof SOURCE]>, info: FieldInfo, nodes: ReadonlyArray<FieldNode>): ConnectionValue {
    const name = info.def.name
    const where = `${parentType.name}.${name}`
    if (source.records.def.children?.field !== name) throw new FieldError(`\`${where}\` is not served by the emulator`, "FIELD_NOT_SUPPORTED", { field: where })
    const withheld = this.input.paging?.withheldChild
    return ConnectionValue.ofList(
      source.records.children(source.index),
      this.selections.argumentsOf(info.def, nodes[0]!),
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
    const linked = this.input.world.recordsOfType(named.name)
    if (linked === undefined || this.onlyId(nodes, named)) return undefined
    const index = linked.collection.indexOfId(String((value as { id?: unknown }).id))
    return index === undefined ? null : recordObject(linked, index)
  }

  /** Whether the selection of a link reads nothing but its id. */
  private onlyId(nodes: ReadonlyArray<FieldNode>, type: GraphQLObjectType): boolean {
    return this.selections.collectAll(nodes, type).every(([, fs]) => fs[0]!.name.value === "id" || fs[0]!.name.value === "__typename")
  }
}

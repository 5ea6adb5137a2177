import { getNamedType } from "graphql"
import { encodeId } from "../Ids.js"
import { serviceSchema } from "../schema.js"
import type { CursorMode } from "./cursors.js"
import { aliases, definitions as defaultDefinitions } from "./definitions.js"
import type { RecordDefinition } from "./RecordDefinition.js"
import { Records, type RecordsWorld } from "./Records.js"
import { saltOf } from "./values.js"

/** An account's records: one collection per record type (Records), linked consistently, changed by admin operations and churn. */

export interface WorldOptions {
  readonly seed: number
  /** Ids of this account's records start above this (ids are unique across accounts). */
  readonly idBase: number
  readonly webBase: string
  readonly nowMs: number
  readonly jobs: number
  /** Records per collection, over the defaults that scale with `jobs`. */
  readonly sizes?: Readonly<Record<string, number>>
  readonly cursorMode: () => CursorMode
  /** Collection definitions that replace or add to the defaults (by name). */
  readonly definitions?: ReadonlyArray<RecordDefinition>
}

/** A change made to the world, as webhooks and the churn log report it. */
export interface Change {
  readonly collection: string
  readonly kind: "create" | "update" | "destroy"
  readonly id: string
  readonly atMs: number
}

/** A collection is served at the root field of its name: the schema must have it, listing its node type. */
export const checkServed = (def: RecordDefinition): void => {
  const field = serviceSchema().getQueryType()?.getFields()[def.name]
  if (field === undefined) throw new Error(`emulator: collection ${def.name}: the schema subset has no root field \`${def.name}\` to serve it at`)
  const listed = getNamedType(field.type).name
  if (listed !== `${def.nodeType}Connection`) throw new Error(`emulator: collection ${def.name}: its root field lists ${listed}, not ${def.nodeType}Connection`)
}

/** The default collections with `overrides` in place of those of the same name (or added), each checked as served. */
export const collectionDefinitions = (overrides: ReadonlyArray<RecordDefinition> = []): ReadonlyArray<RecordDefinition> => {
  const defs = new Map(defaultDefinitions.map((d) => [d.name, d]))
  for (const d of overrides) {
    checkServed(d)
    defs.set(d.name, d)
  }
  return [...defs.values()]
}

export class World implements RecordsWorld {
  private readonly byName = new Map<string, Records>()

  constructor(readonly options: WorldOptions) {
    for (const def of collectionDefinitions(options.definitions)) this.byName.set(def.name, new Records(def, this, (options.seed + saltOf(def.name)) >>> 0))
    // the seeded records of every collection draw their links over every collection's seeded records
    const seeded = new Map([...this.byName.values()].map((r) => [r.name, options.sizes?.[r.name] ?? r.def.size(options.jobs, options.seed)]))
    for (const records of this.byName.values()) records.create(seeded.get(records.name)!, records.seed, options.nowMs, seeded)
  }

  /** The number of records of each collection (deleted ones included: indices never move). */
  sizes(): ReadonlyMap<string, number> {
    return new Map([...this.byName.values()].map((r) => [r.name, r.collection.size]))
  }

  get names(): ReadonlyArray<string> {
    return [...this.byName.keys()]
  }

  has(name: string): boolean {
    return this.byName.has(name) || aliases[name] !== undefined
  }

  /** The scope a token needs to read this root field, when it lists a collection. */
  scopeOf(name: string): string | undefined {
    return this.has(name) ? this.records(name).def.scope : undefined
  }

  records(name: string): Records {
    const records = this.byName.get(aliases[name] ?? name)
    if (records === undefined) throw new Error(`emulator: no collection ${name} (the collections are ${this.names.join(", ")})`)
    return records
  }

  /** The collection whose node type is `nodeType`, if one is. */
  recordsOfType(nodeType: string): Records | undefined {
    for (const r of this.byName.values()) if (r.def.nodeType === nodeType) return r
    return undefined
  }

  /** A record as the admin API lists it: the node with every field, line items as their full list. */
  listed(name: string, index: number): Record<string, unknown> & { id: string } {
    const records = this.records(name)
    const record = records.record(index)
    if (records.def.children !== undefined) record[records.def.children.field] = records.children(index)
    return record
  }

  idOf(name: string, index: number): string {
    return encodeId(this.records(name).def.nodeType, this.records(name).collection.idNumber(index))
  }
}

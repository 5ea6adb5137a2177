import { isObjectType } from "graphql"
import { isoSeconds } from "../Ids.js"
import { sequence } from "../Prng.js"
import { serviceSchema } from "../schema.js"
import { Collection } from "./Collection.js"
import type { CursorMode } from "./cursors.js"
import type { RecordDefinition, RecordInput } from "./RecordDefinition.js"
import { childEdit, childRecord, customFieldsOf, defaultChildCount, editableFields, genericFields, genericFieldsExcept } from "./RecordType.js"

/**
 * One collection of an account's records, as GraphQL serves them: the collection's positions (Collection) with each
 * record drawn from its definition, its links to records of other collections, its line items, and the edits made
 * to them.
 */

/** What a collection's records ask of the world they live in: the other collections and the account's settings. */
export interface RecordsWorld {
  readonly options: { readonly idBase: number; readonly webBase: string; readonly cursorMode: () => CursorMode }
  records(name: string): Records
  /** The number of records of each collection (deleted ones included: indices never move). */
  sizes(): ReadonlyMap<string, number>
}

interface ChildState {
  readonly slots: Array<number>
  next: number
  readonly edits: Map<number, Record<string, unknown>>
}

export class Records {
  readonly collection: Collection
  private readonly edits = new Map<number, Record<string, unknown>>()
  private readonly childStates = new Map<number, ChildState>()
  private readonly hasCreated: boolean
  private readonly hasUpdated: boolean
  private readonly editable: ReadonlyArray<string>
  private editDraws = 0
  /** Per batch of created records (from `start`), the sizes of the collections its links are drawn over. */
  private readonly drawnOver: Array<{ readonly start: number; readonly sizes: ReadonlyMap<string, number> }> = []
  private drawn: ((ctx: { seed: number; index: number; createdMs: number; webBase: string }) => Record<string, unknown>) | undefined
  private own: ReadonlySet<string> | undefined
  private readonly drawnFor = new WeakMap<ReadonlySet<string>, (ctx: { seed: number; index: number; createdMs: number; webBase: string }) => Record<string, unknown>>()

  constructor(
    readonly def: RecordDefinition,
    readonly world: RecordsWorld,
    readonly seed: number
  ) {
    const type = serviceSchema().getType(def.nodeType)
    if (!isObjectType(type)) throw new Error(`emulator: collection ${def.name}: ${def.nodeType} is not an object type of the schema`)
    this.hasCreated = type.getFields().createdAt !== undefined
    this.hasUpdated = type.getFields().updatedAt !== undefined
    this.editable = editableFields(def.nodeType)
    this.collection = new Collection({ idKind: def.nodeType, sortKeys: Object.keys(def.sortKeys ?? {}), sortValue: (key, index) => this.sortValue(key, index) }, world.options.idBase, {
      cursorMode: world.options.cursorMode
    })
  }

  get name(): string {
    return this.def.name
  }

  /** Whether the node type has `updatedAt` (edits move it). */
  get tracksUpdates(): boolean {
    return this.hasUpdated
  }

  input(index: number): RecordInput {
    const c = this.collection
    return {
      seed: c.seedOf(index),
      index,
      createdMs: c.createdMs(index),
      updatedMs: c.updatedMs(index),
      idNumber: c.idNumber(index),
      webBase: this.world.options.webBase
    }
  }

  /** The index of the record a link field of record `index` names, or null. */
  linkIndex(field: string, index: number): number | null {
    const rule = this.def.links?.[field]
    if (rule === undefined) return null
    const edited = this.edits.get(index)?.[`__link:${field}`]
    if (typeof edited === "number" || edited === null) return edited as number | null
    return rule.pick(
      this.input(index),
      (name) => this.drawnSize(index, name),
      (collection, f, i) => (collection === "__self" ? this.linkIndex(f, i) : this.world.records(collection).linkIndex(f, i))
    )
  }

  /**
   * The record as GraphQL serves the node with every field selected: scalars, enums and value objects, links as
   * `{ id }` (or null), custom fields; line items are `children`.
   */
  record(index: number, only?: ReadonlySet<string>): Record<string, unknown> & { id: string } {
    const input = this.input(index)
    const ctx = { seed: input.seed, index, createdMs: input.createdMs, webBase: input.webBase }
    const out = Object.assign(this.schemaDrawn(only)(ctx), { id: this.collection.idOf(index) })
    if (this.def.fields) Object.assign(out, this.def.fields(input))
    if (this.hasCreated) out.createdAt = isoSeconds(input.createdMs)
    if (this.hasUpdated) out.updatedAt = isoSeconds(input.updatedMs)
    for (const [field, rule] of Object.entries(this.def.links ?? {})) {
      if (only !== undefined && !only.has(field)) continue
      const target = this.linkIndex(field, index)
      out[field] = target === null ? null : { id: this.world.records(rule.to).collection.idOf(target) }
    }
    for (const field of this.def.customFields ?? []) {
      if (only !== undefined && !only.has(field)) continue
      out[field] = customFieldsOf(this.def.nodeType, input.seed, index, input.createdMs, input.webBase)
    }
    const edited = this.edits.get(index)
    if (edited) for (const [k, v] of Object.entries(edited)) if (!k.startsWith("__")) out[k] = v
    return out
  }

  /**
   * The draw of every field the record type does not write itself (learnt from one record's own fields), or of those
   * among `only` (a query's selection: a page of 100 nodes draws nothing it does not return).
   */
  private schemaDrawn(only?: ReadonlySet<string>) {
    if (this.own === undefined) {
      const own = new Set<string>(["createdAt", "updatedAt", ...Object.keys(this.def.links ?? {}), ...(this.def.customFields ?? [])])
      if (this.def.fields) for (const key of Object.keys(this.def.fields({ seed: this.seed, index: 0, createdMs: 0, updatedMs: 0, idNumber: 1, webBase: "" }))) own.add(key)
      this.own = own
      this.drawn = genericFieldsExcept(this.def.nodeType, own)
    }
    if (only === undefined) return this.drawn!
    let draw = this.drawnFor.get(only)
    if (draw === undefined) {
      const skipped = new Set(this.own)
      const type = serviceSchema().getType(this.def.nodeType)
      if (isObjectType(type)) for (const name of Object.keys(type.getFields())) if (!only.has(name)) skipped.add(name)
      draw = genericFieldsExcept(this.def.nodeType, skipped)
      this.drawnFor.set(only, draw)
    }
    return draw
  }

  /** The record's line items, in order (a visit's are its job's). */
  children(index: number): ReadonlyArray<Record<string, unknown>> {
    const spec = this.def.children
    if (spec === undefined) return []
    if (spec.of !== undefined) {
      const parent = this.linkIndex(spec.of.link, index)
      return parent === null ? [] : this.world.records(spec.of.collection).children(parent)
    }
    const state = this.childState(index)
    const input = this.input(index)
    const products = this.world.records("products").collection
    const productCount = this.drawnSize(index, "products")
    const productId = (seed: number, key: number) => {
      if (productCount === 0 || (seed ^ key) % 10 < 3) return null
      return products.idOf(Math.abs(seed * 31 + key) % productCount)
    }
    return state.slots.map((slot) =>
      childRecord(
        spec.nodeType,
        { seed: input.seed, parentIndex: index, slot, parentIdNumber: input.idNumber, createdMs: input.createdMs, updatedMs: input.createdMs, webBase: input.webBase },
        productId,
        state.edits.get(slot)
      )
    )
  }

  private childState(index: number): ChildState {
    const existing = this.childStates.get(index)
    if (existing) return existing
    const count = defaultChildCount(this.collection.seedOf(index), index)
    return { slots: Array.from({ length: count }, (_, i) => i), next: count, edits: new Map() }
  }

  sortValue(key: string, index: number): number | string {
    if (key === "UPDATED_AT") return this.collection.updatedMs(index)
    if (key === "CREATED_AT" || key === "JOB_NUMBER") return index
    const path = this.def.sortKeys?.[key]
    if (path === undefined) return index
    let value: unknown = this.record(index)
    for (const part of path.split(".")) value = (value as Record<string, unknown> | null)?.[part]
    if (typeof value === "number") return value
    if (typeof value === "string") return /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : value
    return value === null || value === undefined ? "" : String(value)
  }

  // ---- changes ------------------------------------------------------------------------------------------------

  /**
   * Appends `count` records. Their links are drawn over the collections as they are now (`sizes`, default the world's
   * sizes at this moment): records created later elsewhere never move an existing record's link or line item product,
   * as they would not at the service.
   */
  create(count: number, seed: number, nowMs: number, sizes: ReadonlyMap<string, number> = this.world.sizes()): ReadonlyArray<number> {
    const indices = this.collection.append(count, seed, nowMs)
    if (indices.length > 0) this.drawnOver.push({ start: indices[0]!, sizes })
    return indices
  }

  /** How many records of `collection` the links of record `index` are drawn over (its batch's sizes). */
  drawnSize(index: number, collection: string): number {
    const batches = this.drawnOver
    if (batches.length === 0) return this.world.records(collection).collection.size
    let lo = 0
    let hi = batches.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (batches[mid]!.start <= index) lo = mid
      else hi = mid - 1
    }
    return batches[lo]!.sizes.get(collection) ?? this.world.records(collection).collection.size
  }

  /** Several fields drawn again (a text field and an enum, or what the type says), the update time moved to now. */
  edit(indices: ReadonlyArray<number>, editSeed: number | undefined, nowMs: number): void {
    for (const index of indices) {
      const s = editSeed ?? this.seed + 7 * ++this.editDraws
      const input = this.input(index)
      const drawn = this.def.edit
        ? this.def.edit(input, s)
        : Object.fromEntries(
            Object.entries(genericFields(this.def.nodeType)({ seed: input.seed ^ Math.imul(s + 1, 0x2545f491), index, createdMs: input.createdMs, webBase: input.webBase })).filter(([k]) =>
              this.editable.includes(k)
            )
          )
      this.edits.set(index, { ...this.edits.get(index), ...drawn })
    }
    if (this.hasUpdated) this.collection.touch(indices, nowMs)
    else this.collection.version++
  }

  remove(indices: ReadonlyArray<number>): void {
    this.collection.remove(indices)
  }

  /** Line items of parents added, removed and edited; the parents' update time moves to now. */
  editChildren(index: number, change: { readonly add?: number; readonly remove?: number; readonly edit?: number }, seed: number, nowMs: number): { readonly added: number; readonly removed: number; readonly edited: number } {
    if (this.def.children === undefined || this.def.children.of !== undefined) throw new Error(`collection ${this.name} has no line items of its own`)
    const state = this.childState(index)
    this.childStates.set(index, state)
    const next = sequence(seed)
    let removed = 0
    for (let k = 0; k < (change.remove ?? 0) && state.slots.length > 0; k++, removed++) state.slots.splice(Math.floor(next() * state.slots.length), 1)
    let edited = 0
    for (let k = 0; k < (change.edit ?? 0) && state.slots.length > 0; k++, edited++) {
      const slot = state.slots[Math.floor(next() * state.slots.length)]!
      state.edits.set(slot, childEdit(this.collection.seedOf(index), index * 1024 + slot, seed + k, nowMs))
    }
    let added = 0
    for (; added < (change.add ?? 0) && state.next < 1024; added++) state.slots.push(state.next++)
    if (this.hasUpdated) this.collection.touch([index], nowMs)
    return { added, removed, edited }
  }
}

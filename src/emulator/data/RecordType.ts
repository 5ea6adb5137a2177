import { type GraphQLNamedType, type GraphQLObjectType, isObjectType } from "graphql"
import { encodeId, isoSeconds } from "../Ids.js"
import { hash32, pick, unit } from "../Prng.js"
import { serviceSchema } from "../schema.js"
import { definitions } from "./definitions.js"
import { objectDraw, saltOf, type ValueContext } from "./values.js"

/** How a record type's records are drawn: the schema-drawn fields, line items and custom fields of its definition (RecordDefinition.ts). */
/** Types drawn as links (`{ id }` of a record), never as embedded objects: the collections' and line items' types, and the service's own. */
const nodeTypeNames = new Set([...definitions.flatMap((d) => [d.nodeType, ...(d.children ? [d.children.nodeType] : [])]), "Account", "Application"])
export const isNode = (t: GraphQLNamedType) => nodeTypeNames.has(t.name)

const objectType = (name: string): GraphQLObjectType => {
  const t = serviceSchema().getType(name)
  if (!isObjectType(t)) throw new Error(`emulator: the schema has no object type ${name}`)
  return t
}

/** Every schema-drawn field of a node type (scalars, enums, value objects), compiled once per type. */
const generic = new Map<string, (ctx: ValueContext) => Record<string, unknown>>()
export const genericFields = (typeName: string): ((ctx: ValueContext) => Record<string, unknown>) => {
  let draw = generic.get(typeName)
  if (draw === undefined) {
    const fields = Object.values(objectType(typeName).getFields()).filter((f) => f.name !== "id")
    const object = objectDraw(typeName, fields, isNode)
    draw = (ctx) => object(ctx, 0) as Record<string, unknown>
    generic.set(typeName, draw)
  }
  return draw
}

/** The schema-drawn fields of a node type but those the record type writes itself (they would be drawn for nothing). */
export const genericFieldsExcept = (typeName: string, own: ReadonlySet<string>): ((ctx: ValueContext) => Record<string, unknown>) => {
  const fields = Object.values(objectType(typeName).getFields()).filter((f) => f.name !== "id" && !own.has(f.name))
  const object = objectDraw(typeName, fields, isNode)
  return (ctx) => object(ctx, 0) as Record<string, unknown>
}

/** The fields an edit draws again when the type says nothing: the first text field and the first enum field. */
export const editableFields = (typeName: string): ReadonlyArray<string> => {
  const type = objectType(typeName)
  const fields = Object.values(type.getFields()).filter((f) => !f.deprecationReason && f.args.length === 0)
  const text = fields.find((f) => ["title", "name", "description", "subject", "instructions", "message"].includes(f.name) && String(f.type).startsWith("String"))
  const enumField = fields.find((f) => serviceSchema().getType(String(f.type).replace(/[![\]]/g, ""))?.astNode?.kind === "EnumTypeDefinition")
  return [text?.name, enumField?.name].filter((n): n is string => n !== undefined)
}

// ---- line items ------------------------------------------------------------------------------------------------

/** Most parents have 1 to 6 line items; about 1% have 30 to 60 (more than any inner page). */
export const defaultChildCount = (seed: number, index: number): number =>
  unit(seed, index, 4_401) < 0.01 ? 30 + (hash32(seed, index, 4_402) % 31) : 1 + (hash32(seed, index, 4_403) % 6)

/** Child slots are numbered per parent; their ids hold parent and slot. */
export const childSlotsPerParent = 1024

export interface ChildInput {
  readonly seed: number
  readonly parentIndex: number
  readonly slot: number
  readonly parentIdNumber: number
  readonly createdMs: number
  readonly updatedMs: number
  readonly webBase: string
}

interface ChildType {
  readonly draw: (ctx: ValueContext) => Record<string, unknown>
  readonly linksProduct: boolean
  readonly hasJobLineItem: boolean
}
const childTypes = new Map<string, ChildType>()
const childType = (nodeType: string): ChildType => {
  let t = childTypes.get(nodeType)
  if (t === undefined) {
    const fields = objectType(nodeType).getFields()
    const own = new Set(["id", "name", "quantity", "unitPrice", "totalPrice", "createdAt", "updatedAt", "linkedProductOrService", "jobLineItem"])
    t = { draw: genericFieldsExcept(nodeType, own), linksProduct: fields.linkedProductOrService !== undefined, hasJobLineItem: fields.jobLineItem !== undefined }
    childTypes.set(nodeType, t)
  }
  return t
}

/** A line item of `nodeType` (JobLineItem, QuoteLineItem, ...) in slot `slot` of its parent. */
export const childRecord = (nodeType: string, input: ChildInput, productId: (seed: number, key: number) => string | null, edit?: Record<string, unknown>): Record<string, unknown> => {
  const key = input.parentIndex * childSlotsPerParent + input.slot
  const type = childType(nodeType)
  const quantity = 1 + (hash32(input.seed, key, 5_101) % 8)
  const unitPrice = Math.round(unit(input.seed, key, 5_102) * 40_000) / 100
  const record = type.draw({ seed: input.seed, index: key, createdMs: input.createdMs, webBase: input.webBase })
  record.id = encodeId(nodeType, input.parentIdNumber * childSlotsPerParent + input.slot)
  record.name = pick(lineItemNames, input.seed, key, 5_103)
  record.quantity = quantity
  record.unitPrice = unitPrice
  record.totalPrice = Math.round(quantity * unitPrice * 100) / 100
  record.createdAt = isoSeconds(input.createdMs)
  record.updatedAt = isoSeconds(input.updatedMs)
  if (type.linksProduct) {
    const product = productId(input.seed, key)
    record.linkedProductOrService = product === null ? null : { id: product }
  }
  if (type.hasJobLineItem) record.jobLineItem = null
  return edit ? Object.assign(record, edit) : record
}

const lineItemNames = ["Lawn mowing", "Mulch (yards)", "Gutter guard", "Labour – hourly", "Déneigement", "Window cleaning (per pane)", "Pressure washing 🚿", "Trip charge", "Hedge trimming", "Disposal fee"]

/** What an edit of a line item changes. */
export const childEdit = (seed: number, key: number, editSeed: number, nowMs: number): Record<string, unknown> => {
  const s = seed ^ Math.imul(editSeed + 1, 0x2545f491)
  const quantity = 1 + (hash32(s, key, 5_201) % 12)
  const unitPrice = Math.round(unit(s, key, 5_202) * 40_000) / 100
  return {
    name: `${pick(lineItemNames, s, key, 5_203)} (revised)`,
    quantity,
    unitPrice,
    totalPrice: Math.round(quantity * unitPrice * 100) / 100,
    updatedAt: isoSeconds(nowMs)
  }
}

// ---- custom fields ---------------------------------------------------------------------------------------------

const customFieldKinds = [
  { kind: "CustomFieldArea", label: "Lawn area" },
  { kind: "CustomFieldBoolean", label: "Has dog" },
  { kind: "CustomFieldLink", label: "Photos" },
  { kind: "CustomFieldNumber", label: "Lot size" },
  { kind: "CustomFieldSelect", label: "Season" },
  { kind: "CustomFieldText", label: "Gate code" }
] as const

/** 0 to 3 custom fields of distinct kinds (some records have none), each with the fields of its kind. */
export const customFieldsOf = (nodeType: string, seed: number, index: number, createdMs: number, webBase: string): ReadonlyArray<Record<string, unknown>> => {
  const count = unit(seed, index, 6_001) < 0.3 ? 0 : 1 + (hash32(seed, index, 6_002) % 3)
  const first = hash32(seed, index, 6_003) % customFieldKinds.length
  const out: Array<Record<string, unknown>> = []
  for (let k = 0; k < count; k++) {
    const slot = (first + k * 2) % customFieldKinds.length
    const { kind, label } = customFieldKinds[slot]!
    const ctx: ValueContext = { seed, index: index * 8 + k, createdMs, webBase }
    const value = genericFields(kind)(ctx)
    const extra: Record<string, unknown> =
      kind === "CustomFieldSelect" ? { options: ["Spring", "Summer", "Fall", "Winter"], valueSelect: pick(["Spring", "Summer", "Fall", "Winter"], seed, index, 6_004 + k) } : {}
    out.push({ __typename: kind, ...value, ...extra, id: encodeId("CustomField", saltOf(`${nodeType}.${kind}`) % 1000 + 1), label })
  }
  return out
}

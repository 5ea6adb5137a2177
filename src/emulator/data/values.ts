import {
  type GraphQLField, type GraphQLNamedType, type GraphQLOutputType, getNamedType, isEnumType, isListType, isNonNullType,
  isObjectType, isScalarType
} from "graphql"
import { isoSeconds } from "../Ids.js"
import { hash32, pick, unit } from "../Prng.js"

/**
 * Field values from the schema: every scalar, enum and value object of a node type, drawn from (seed, index, salt)
 * so a record is a pure function of its index and costs no memory until it is served. Collections name the fields
 * they generate themselves (ids, times, links, numbers that must agree); everything else comes from here, shaped by
 * the field's type and name, null only where the schema allows it.
 */

const DAY = 86_400_000

const words = ["north", "maple", "harbour", "cedar", "summit", "river", "oak", "pine", "willow", "granite", "meadow", "aurora"]
const firstNames = ["Ana", "Benoît", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hiroshi", "Inès", "José", "Kai", "Léa", "Mateo", "Noor", "Olivia", "Priya"]
const lastNames = ["Anderson", "Bélanger", "Chen", "Dubois", "Eriksson", "García", "Haddad", "Ivanova", "Jensen", "Kowalski", "Lemaire", "Müller", "Nakamura", "O'Brien"]
const companies = ["Maple & Co.", "Sunrise Dental", "Café Lumière", "Northside HOA", "Greenway Apartments", "Boulangerie Saint-Roch", "Østergaard ApS", "Zürich Holdings"]
const phrases = [
  "Spring cleanup", "Gutter cleaning – front", "Window washing 🪟", "Déneigement entrée", "Hedge trimming (north side)", "Pressure wash patio",
  "Furnace tune-up", "Lawn aeration", "Jardín trasero – poda 🌳", "Deck staining", "Ремонт забора", "庭の手入れ", "Leaf cleanup 🍂", "Pool opening"
]
const notes = [
  "Gate code 4412. Dog in the yard, friendly.", "Park on the street, not the driveway.", "Call before arriving.", "Clé sous le pot de fleurs 🌼",
  "Use the side entrance; watch the low beam.", "Invoice to the property manager.", "Thanks for your business!"
]
const streets = ["12 Maple Ave", "480 Rue Saint-Denis", "7 Harbour Rd", "2210 Cedar St", "55 Østerbro Allé", "9 Calle del Sol"]
const cities = ["Toronto", "Montréal", "Halifax", "Calgary", "Vancouver", "Québec"]
const provinces = ["ON", "QC", "NS", "AB", "BC"]
const colors = ["#3b82f6", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6"]

export interface ValueContext {
  readonly seed: number
  readonly index: number
  /** The record's creation time: other times are drawn after it. */
  readonly createdMs: number
  readonly webBase: string
}

/** Chooses a value for one field; `salt` separates the draws of different fields. */
type Draw = (ctx: ValueContext, salt: number) => unknown

const nullable = (p: number, draw: Draw): Draw => (ctx, salt) => (unit(ctx.seed, ctx.index, salt + 977) < p ? null : draw(ctx, salt))

const person = (ctx: ValueContext, salt: number) => `${pick(firstNames, ctx.seed, ctx.index, salt)} ${pick(lastNames, ctx.seed, ctx.index, salt + 1)}`

/** A string for a field, by what its name says it holds. */
const stringDraw = (name: string): Draw => {
  const n = name.toLowerCase()
  if (n.endsWith("uri") || n.endsWith("url")) return (ctx, salt) => `${ctx.webBase}/${name.replace(/Uri$|Url$/, "").toLowerCase()}/${hash32(ctx.seed, ctx.index, salt) % 1_000_000}`
  if (n.includes("email")) return (ctx, salt) => `${pick(firstNames, ctx.seed, ctx.index, salt)}.${ctx.index}@example.com`.toLowerCase().normalize("NFD").replace(/[^a-z0-9.@]/g, "")
  if (n.includes("phone") || n === "raw" || n === "friendly") return (ctx, salt) => `555-${String(hash32(ctx.seed, ctx.index, salt) % 10_000).padStart(4, "0")}`
  if (n === "firstname" || n === "first") return (ctx, salt) => pick(firstNames, ctx.seed, ctx.index, salt)
  if (n === "lastname" || n === "last") return (ctx, salt) => pick(lastNames, ctx.seed, ctx.index, salt)
  if (n === "companyname") return (ctx, salt) => pick(companies, ctx.seed, ctx.index, salt)
  if (n.includes("name") || n === "full" || n === "contactname" || n === "completedby") return person
  if (n === "title" || n === "subject" || n === "description") return (ctx, salt) => pick(phrases, ctx.seed, ctx.index, salt)
  if (n.includes("instructions") || n === "message" || n.includes("disclaimer") || n === "notes") return (ctx, salt) => pick(notes, ctx.seed, ctx.index, salt)
  if (n.startsWith("street")) return (ctx, salt) => pick(streets, ctx.seed, ctx.index, salt)
  if (n === "city") return (ctx, salt) => pick(cities, ctx.seed, ctx.index, salt)
  if (n === "province") return (ctx, salt) => pick(provinces, ctx.seed, ctx.index, salt)
  if (n === "country") return () => "Canada"
  if (n === "postalcode") return (ctx, salt) => `H${hash32(ctx.seed, ctx.index, salt) % 10}A ${hash32(ctx.seed, ctx.index, salt + 1) % 10}B${hash32(ctx.seed, ctx.index, salt + 2) % 10}`
  if (n === "latitude") return (ctx, salt) => (43 + unit(ctx.seed, ctx.index, salt) * 5).toFixed(6)
  if (n === "longitude") return (ctx, salt) => (-79 - unit(ctx.seed, ctx.index, salt) * 5).toFixed(6)
  if (n === "uuid") return (ctx, salt) => `${hash32(ctx.seed, ctx.index, salt).toString(16).padStart(8, "0")}-0000-4000-8000-${String(ctx.index).padStart(12, "0")}`
  if (n === "assignedcolor") return (ctx, salt) => pick(colors, ctx.seed, ctx.index, salt)
  if (n === "language") return () => "en"
  if (n === "role") return () => "client"
  if (n.includes("status") || n.includes("type") || n.includes("method")) return (ctx, salt) => pick(["standard", "custom"], ctx.seed, ctx.index, salt)
  return (ctx, salt) => `${pick(words, ctx.seed, ctx.index, salt)}-${hash32(ctx.seed, ctx.index, salt + 1) % 1000}`
}

/** A number for a Float field: money unless its name says a rate or a coordinate. */
const floatDraw = (name: string): Draw => {
  const n = name.toLowerCase()
  if (n === "latitude") return (ctx, salt) => Math.round((43 + unit(ctx.seed, ctx.index, salt) * 5) * 1e6) / 1e6
  if (n === "longitude") return (ctx, salt) => Math.round((-79 - unit(ctx.seed, ctx.index, salt) * 5) * 1e6) / 1e6
  if (n.includes("rate") || n === "markup") return (ctx, salt) => Math.round(unit(ctx.seed, ctx.index, salt) * 3000) / 100
  if (n.includes("quantity") || n === "qty" || n === "length" || n === "width") return (ctx, salt) => 1 + (hash32(ctx.seed, ctx.index, salt) % 12)
  return (ctx, salt) => Math.round(unit(ctx.seed, ctx.index, salt) * 250_000) / 100
}

const scalarDraw = (type: string, name: string): Draw => {
  switch (type) {
    case "Boolean":
      return (ctx, salt) => unit(ctx.seed, ctx.index, salt) < 0.5
    case "Int":
    case "Minutes":
      return (ctx, salt) => hash32(ctx.seed, ctx.index, salt) % 60
    case "Float":
      return floatDraw(name)
    case "ISO8601DateTime":
      return (ctx, salt) => isoSeconds(ctx.createdMs + Math.floor(unit(ctx.seed, ctx.index, salt) * 40 * DAY))
    case "Timezone":
      return () => "America/Toronto"
    case "EncodedId":
      return (ctx, salt) => Buffer.from(`gid://service/Thing/${hash32(ctx.seed, ctx.index, salt) % 1_000_000}`).toString("base64")
    default:
      return stringDraw(name)
  }
}

/** How nullable fields turn out null: often for times and optional text, rarely for the rest. */
const nullShare = (type: string) => (type === "ISO8601DateTime" ? 0.35 : type === "String" ? 0.2 : 0.1)

/** Fields a value object generator leaves out: nested node links and connections are not value objects. */
export type FieldFilter = (field: GraphQLField<unknown, unknown>) => boolean

/** A value for a field of `type` (nullable or not, list or not), or undefined when the type is not generated here. */
export const drawFor = (type: GraphQLOutputType, name: string, isNode: (t: GraphQLNamedType) => boolean, depth = 0): Draw | undefined => {
  const required = isNonNullType(type)
  const inner = required ? type.ofType : type
  let draw: Draw | undefined
  if (isListType(inner)) {
    const element = drawFor(inner.ofType, name, isNode, depth)
    if (element === undefined) return undefined
    draw = (ctx, salt) => Array.from({ length: hash32(ctx.seed, ctx.index, salt + 3) % 3 }, (_, i) => element(ctx, salt + 17 * (i + 1)))
  } else {
    const named = getNamedType(inner)
    if (isEnumType(named)) {
      const values = named.getValues().filter((v) => !v.deprecationReason).map((v) => v.name)
      draw = (ctx, salt) => pick(values.length > 0 ? values : named.getValues().map((v) => v.name), ctx.seed, ctx.index, salt)
    } else if (isScalarType(named)) draw = scalarDraw(named.name, name)
    else if (isObjectType(named) && !isNode(named) && !named.name.endsWith("Connection") && depth < 3) {
      const object = objectDraw(named.name, Object.values(named.getFields()), isNode, depth + 1)
      draw = object
    } else return undefined
  }
  return required ? draw : nullable(isScalarType(getNamedType(inner)) ? nullShare(getNamedType(inner).name) : 0.25, draw)
}

/** A value object (an address, amounts, a payment term): every field that has no required argument. */
export const objectDraw = (typeName: string, fields: ReadonlyArray<GraphQLField<unknown, unknown>>, isNode: (t: GraphQLNamedType) => boolean, depth = 0): Draw => {
  const parts: Array<readonly [string, Draw]> = []
  for (const f of fields) {
    if (f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) continue
    const draw = drawFor(f.type, f.name, isNode, depth)
    if (draw !== undefined) parts.push([f.name, draw])
  }
  const salts = parts.map(([name]) => saltOf(`${typeName}.${name}`))
  return (ctx, salt) => {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < parts.length; i++) out[parts[i]![0]] = parts[i]![1](ctx, salt + salts[i]!)
    return out
  }
}

/** A stable salt per field name, so adding a field to a type does not change the others' values. */
export const saltOf = (name: string): number => {
  let h = 2166136261
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619)
  return (h >>> 0) % 1_000_000
}

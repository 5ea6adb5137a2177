import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsOrDie } from "../db/rows.js"
import type { EmulatorAdmin } from "../emulator/EmulatorAdmin.js"
import { sanitizeJson, sanitizeText } from "../sync/landing/sanitize.js"
import type { AnyStream, Column } from "../sync/streams/Stream.js"

/**
 * Any stream of an account against the emulator's own listing (`listRecords`): every mapped column of every live
 * record, each parent's line items (ids and columns), each record's custom fields; what is missing, differs, is
 * wrongly marked deleted or still live though the service no longer has it.
 */

export interface StreamComparison {
  readonly stream: string
  readonly serviceRows: number
  readonly missing: number
  readonly mismatched: number
  /** Rows marked deleted whose record the service still has (returned to the app or withheld from it). */
  readonly wronglyDeleted: number
  /** Live rows whose record the service no longer has: deletions missed. */
  readonly stillLive: number
  /** Live rows whose record the service has but does not return to the app (withheld): kept, not an error. */
  readonly keptWithheld: number
  /** Line items and custom fields whose parent's set differs from the service's. */
  readonly nestedMismatched: number
  readonly examples: ReadonlyArray<string>
}

const valueAt = (record: Record<string, unknown>, path: ReadonlyArray<string>): unknown => {
  let v: unknown = record
  for (const part of path) v = v === null || v === undefined ? undefined : (v as Record<string, unknown>)[part]
  return v
}

/** What a column must hold for this record as the service lists it (timestamps as epoch ms, text made storable). */
export const expectedColumnValue = (column: Column, record: Record<string, unknown>): unknown => {
  if (!column.selected) return null
  const v = valueAt(record, column.path)
  if (v === null || v === undefined) return null
  if (column.type === "timestamptz") return Date.parse(v as string)
  if (column.type === "jsonb") return sanitizeJson(v)
  // a coordinate sent as a string lands as its number
  if (column.type === "double precision") return typeof v === "string" ? (Number.isFinite(Number(v)) && v.trim() !== "" ? Number(v) : null) : v
  return typeof v === "string" ? sanitizeText(v) : v
}

/**
 * A column's value as read from Postgres, in the form of `expectedColumnValue`: a `numeric` comes back as the
 * decimal text Postgres keeps, compared as the number the service's JSON holds.
 */
export const storedColumnValue = (column: Column, row: Record<string, unknown>): unknown => {
  const v = row[column.column]
  if (column.type === "numeric" && typeof v === "string") return Number(v)
  return v instanceof Date ? v.getTime() : v
}

/** JSON with object keys sorted at every level (jsonb does not keep the service's key order). */
const canonical = (v: unknown): string =>
  v === null || typeof v !== "object"
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(canonical).join(",")}]`
      : `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`

const differs = (columns: ReadonlyArray<Column>, row: Record<string, unknown>, record: Record<string, unknown>) =>
  columns.find((c) => canonical(storedColumnValue(c, row)) !== canonical(expectedColumnValue(c, record)))

const sameSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n")

/** `servedTo` (a client id): against what the emulator serves that app (what its paging faults withhold left out). */
export const compareStream = (admin: EmulatorAdmin, stream: AnyStream, accountId: string, servedTo?: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listed = yield* admin.listRecords({ accountId, collection: stream.connection, ...(servedTo === undefined ? {} : { servedTo }) })
    const service = new Map(listed.map((r) => [String(r.id), r]))
    // served to one app: the records the service has but withholds from it are neither missing nor deleted
    const everyRecord = servedTo === undefined ? listed : yield* admin.listRecords({ accountId, collection: stream.connection })
    const withheld = new Set(everyRecord.map((r) => String(r.id)).filter((id) => !service.has(id)))
    const unserved = new Map(everyRecord.map((r) => [String(r.id), r]))
    const rows = new Map((yield* sql<Record<string, unknown>>`SELECT * FROM ${sql(stream.table)} WHERE account_id = ${accountId}`).map((r) => [String(r.id), r]))
    const examples: Array<string> = []
    const note = (s: string) => void (examples.length < 3 && examples.push(s))
    let missing = 0
    let mismatched = 0
    let wronglyDeleted = 0
    for (const [id, record] of service) {
      const row = rows.get(id)
      if (row === undefined) {
        missing++
        note(`${stream.name} ${id} missing`)
      } else if (row.deleted_at !== null) {
        wronglyDeleted++
        note(`${stream.name} ${id} marked deleted`)
      } else {
        const column = differs(stream.columns, row, record)
        if (column !== undefined) {
          mismatched++
          note(`${stream.name} ${id} differs in ${column.column}`)
        }
      }
    }
    let stillLive = 0
    let keptWithheld = 0
    for (const [id, row] of rows) {
      if (row.deleted_at === null && withheld.has(id)) keptWithheld++
      else if (row.deleted_at === null && !service.has(id)) {
        stillLive++
        note(`${stream.name} ${id} still live`)
      } else if (row.deleted_at !== null && withheld.has(id)) {
        wronglyDeleted++
        note(`${stream.name} ${id} (withheld from the app) marked deleted`)
      }
    }
    let nestedMismatched = 0
    for (const child of stream.children) {
      const byParent = new Map<string, Array<Record<string, unknown>>>()
      for (const r of yield* sql<Record<string, unknown>>`SELECT * FROM ${sql(child.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL`) {
        const parent = String(r[child.parentColumn])
        byParent.set(parent, [...(byParent.get(parent) ?? []), r])
      }
      for (const [id, record] of service) {
        const items = (record[child.field] as ReadonlyArray<Record<string, unknown>> | undefined) ?? []
        const landed = new Map((byParent.get(id) ?? []).map((r) => [String(r.id), r]))
        // line items the service has but withholds from the app stay live where they were seen (not proven gone)
        const servedIds = new Set(items.map((i) => String(i.id)))
        const withheldItems = new Set(
          ((unserved.get(id)?.[child.field] as ReadonlyArray<Record<string, unknown>> | undefined) ?? []).map((i) => String(i.id)).filter((i) => !servedIds.has(i))
        )
        const keptItems = [...landed.keys()].filter((i) => withheldItems.has(i))
        keptWithheld += keptItems.length
        const shown = [...landed.keys()].filter((i) => !withheldItems.has(i))
        const bad = !sameSet(shown, [...servedIds]) || items.some((i) => differs(child.columns, landed.get(String(i.id))!, i) !== undefined)
        if (bad) {
          nestedMismatched++
          note(`${child.table} of ${id} differ`)
        }
      }
    }
    if (stream.customFields !== undefined) {
      const byParent = new Map<string, Array<string>>()
      const fields = yield* rowsOrDie(
        SqlSchema.findAll({
          Request: Schema.String,
          Result: Schema.Struct({ parent_id: Schema.String, field_key: Schema.String }),
          execute: (parentType) => sql`
            SELECT parent_id, field_key FROM custom_fields WHERE account_id = ${accountId} AND parent_type = ${parentType} AND deleted_at IS NULL`
        })(stream.customFields)
      )
      for (const f of fields) byParent.set(f.parent_id, [...(byParent.get(f.parent_id) ?? []), f.field_key])
      for (const [id, record] of service) {
        const want = ((record.customFields as ReadonlyArray<{ id?: string; label: string }> | undefined) ?? []).map((f) => f.id ?? f.label)
        if (!sameSet(byParent.get(id) ?? [], want)) {
          nestedMismatched++
          note(`custom fields of ${stream.name} ${id} differ`)
        }
      }
    }
    return { stream: stream.name, serviceRows: service.size, missing, mismatched, wronglyDeleted, stillLive, keptWithheld, nestedMismatched, examples } satisfies StreamComparison
  })

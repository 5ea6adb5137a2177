import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { expectedColumnValue, storedColumnValue } from "../../src/demo/exactness.js"
import { sanitizeJson, sanitizeText } from "../../src/sync/landing/sanitize.js"
import type { AnyStream, Column } from "../../src/sync/streams/Stream.js"
import { TestEmulator } from "./emulator.js"

/**
 * Exactness of any stream against the emulator's own listing (`listRecords`): the warehouse's live rows of the
 * account are exactly the service's records (same ids, every mapped column equal, and `raw` holding the service's value
 * of every field asked for), each parent's live line items are
 * exactly its line items (every column), each record's live custom fields exactly its custom fields (key, kind, label,
 * unit, value as text and as JSON), and no live line item or custom field is left under a record the service no
 * longer has. A mismatch names the stream,
 * the record and the column.
 */

const valueAt = (record: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((v, part) => (v === null || v === undefined ? undefined : (v as Record<string, unknown>)[part]), record) ?? null

/** Every mapped column, and `raw` at each selected column's path, against the service's record. */
const compareColumns = (where: string, columns: ReadonlyArray<Column>, stored: Record<string, unknown>, expected: Record<string, unknown>) => {
  const got: Record<string, unknown> = { "raw.id": valueAt(stored.raw, ["id"]) }
  const want: Record<string, unknown> = { "raw.id": expected.id }
  for (const c of columns) {
    got[c.column] = storedColumnValue(c, stored)
    want[c.column] = expectedColumnValue(c, expected)
    if (!c.selected) continue
    const raw = `raw.${c.path.join(".")}`
    got[raw] = valueAt(stored.raw, c.path)
    want[raw] = sanitizeJson(valueAt(expected, c.path))
  }
  if (JSON.stringify(got) !== JSON.stringify(want)) expect(got, where).toEqual(want)
}

interface CustomFieldRow {
  readonly parent_id: string
  readonly field_key: string
  readonly field_id: string | null
  readonly label: string
  readonly kind: string
  readonly unit: string | null
  readonly value_text: string | null
  readonly value: unknown
}

/** A custom field as `custom_fields` must hold it: its key, kind, label and unit, its value as text and as JSON. */
const expectedCustomField = (f: Record<string, unknown>): Omit<CustomFieldRow, "parent_id"> => {
  const kind = String(f.__typename)
  const text = (v: unknown) => (v === null || v === undefined ? null : sanitizeText(String(v)))
  const area = f.valueArea as { length: number; width: number } | null | undefined
  const unit = (f.unit as string | null | undefined) ?? null
  const [valueText, value] =
    kind === "CustomFieldArea"
      ? [area ? [`${area.length} x ${area.width}`, unit].filter((p) => p !== null).join(" ") : text(unit), area ?? null]
      : kind === "CustomFieldBoolean"
        ? [text(f.valueBoolean), f.valueBoolean ?? null]
        : kind === "CustomFieldLink"
          ? [text(f.valueUrl), { text: f.valueText ?? null, url: f.valueUrl ?? null }]
          : kind === "CustomFieldNumber"
            ? [text(f.valueNumber), f.valueNumber ?? null]
            : kind === "CustomFieldSelect"
              ? [text(f.valueSelect), f.valueSelect ?? null]
              : [text(f.valueText), f.valueText ?? null]
  return {
    field_key: String(f.id ?? f.label),
    field_id: (f.id as string | null | undefined) ?? null,
    label: sanitizeText(String(f.label)),
    kind,
    unit: "unit" in f ? unit : null,
    value_text: valueText,
    value: value === null ? null : sanitizeJson(value)
  }
}

const idsOf = (list: unknown): Array<string> => ((list as ReadonlyArray<{ id: string }> | null | undefined) ?? []).map((x) => x.id).sort()

/** `served`: against what the emulator serves the test's app (records and line items its paging faults withhold left out). */
export const expectStreamExact = (stream: AnyStream, accountId: string, options: { readonly served?: boolean } = {}) =>
  Effect.gen(function* () {
    const { admin, app } = yield* TestEmulator
    const sql = yield* SqlClient.SqlClient
    const listed = yield* admin.listRecords({ accountId, collection: stream.connection, ...(options.served ? { servedTo: app.clientId } : {}) })
    const service = new Map(listed.map((r) => [String(r.id), r]))
    const rows = yield* sql<Record<string, unknown>>`SELECT * FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL`
    const stored = new Map(rows.map((r) => [String(r.id), r]))
    expect([...stored.keys()].sort(), `${stream.name}: the live rows are the service's records`).toEqual([...service.keys()].sort())
    for (const [id, record] of service) compareColumns(`${stream.name} ${id}`, stream.columns, stored.get(id)!, record)

    for (const child of stream.children) {
      const childRows = yield* sql<Record<string, unknown>>`
        SELECT * FROM ${sql(child.table)} WHERE account_id = ${accountId} AND deleted_at IS NULL`
      const byParent = new Map<string, Array<Record<string, unknown>>>()
      for (const r of childRows) {
        const parent = String(r[child.parentColumn])
        byParent.set(parent, [...(byParent.get(parent) ?? []), r])
      }
      for (const [id, record] of service) {
        const items = (record[child.field] as ReadonlyArray<Record<string, unknown>> | undefined) ?? []
        const landed = byParent.get(id) ?? []
        expect(landed.map((r) => String(r.id)).sort(), `${child.table} of ${stream.name} ${id}`).toEqual(idsOf(items))
        const landedById = new Map(landed.map((r) => [String(r.id), r]))
        for (const item of items) compareColumns(`${child.table} ${item.id} of ${id}`, child.columns, landedById.get(String(item.id))!, item)
      }
      const orphans = [...byParent.keys()].filter((parent) => !service.has(parent))
      expect(orphans, `${child.table}: live rows under parents the service no longer has`).toEqual([])
    }

    if (stream.customFields !== undefined) {
      const fields = yield* sql<CustomFieldRow>`
        SELECT parent_id, field_key, field_id, label, kind, unit, value_text, value FROM custom_fields
        WHERE account_id = ${accountId} AND parent_type = ${stream.customFields} AND deleted_at IS NULL`
      const byParent = new Map<string, Array<CustomFieldRow>>()
      for (const f of fields) byParent.set(f.parent_id, [...(byParent.get(f.parent_id) ?? []), f])
      for (const [id, record] of service) {
        const want = ((record.customFields as ReadonlyArray<Record<string, unknown>> | undefined) ?? []).map(expectedCustomField)
        const got = (byParent.get(id) ?? []).map(({ parent_id: _, ...f }) => f)
        const byKey = (a: { field_key: string }, b: { field_key: string }) => a.field_key.localeCompare(b.field_key)
        expect(got.sort(byKey), `custom fields of ${stream.name} ${id}`).toEqual(want.sort(byKey))
      }
      const orphans = [...byParent.keys()].filter((parent) => !service.has(parent))
      expect(orphans, `custom_fields of ${stream.customFields}: live rows under records the service no longer has`).toEqual([])
    }
    return service.size
  })

/** Every stream exact; the number of live records of each. */
export const expectAccountExact = (streams: ReadonlyArray<AnyStream>, accountId: string, options: { readonly served?: boolean } = {}) =>
  Effect.gen(function* () {
    const counts: Record<string, number> = {}
    for (const stream of streams) counts[stream.name] = yield* expectStreamExact(stream, accountId, options)
    return counts
  })

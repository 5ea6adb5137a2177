import type { SortSpec } from "../data/orders.js"
import type { PageQuery, TimeRange } from "../data/views.js"
import type { Records } from "../data/Records.js"

/**
 * A collection field's (coerced) arguments as the page query its collection answers: the filters and sort keys the
 * collection's definition declares, `first` within the page-size limit, `after` or `offset`. Anything else is
 * refused with an error that names the argument, so a connector never mistakes an ignored argument for an answer.
 */

/** An argument refused at a field; the executor reports it as that field's GraphQL error. */
export class FieldError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly extra: Record<string, unknown> = {}
  ) {
    super(message)
  }
}

export const notSupported = (argument: string, where: string) =>
  new FieldError(`argument ${argument} of ${where} is not supported by the emulator`, "ARGUMENT_NOT_SUPPORTED", { argument })

const parseTime = (argument: string, value: unknown): number => {
  const ms = typeof value === "string" ? Date.parse(value) : NaN
  if (!Number.isFinite(ms)) throw new FieldError(`${argument}: ${JSON.stringify(value)} is not an ISO 8601 date-time`, "INVALID_ARGUMENT", { argument })
  return ms
}

const timeRange = (argument: string, value: Record<string, unknown>): TimeRange => ({
  ...(value.after != null ? { afterMs: parseTime(`${argument}.after`, value.after) } : {}),
  ...(value.before != null ? { beforeMs: parseTime(`${argument}.before`, value.before) } : {}),
  ...(value.eq != null ? { eqMs: parseTime(`${argument}.eq`, value.eq) } : {})
})

/** `after` and `before` exclusive, `eq` to the second. */
const inRange = (range: TimeRange, ms: number): boolean =>
  (range.afterMs === undefined || ms > range.afterMs) &&
  (range.beforeMs === undefined || ms < range.beforeMs) &&
  (range.eqMs === undefined || Math.floor(ms / 1000) === Math.floor(range.eqMs / 1000))

/** The page size and position arguments every connection takes (`before`, `last` refused). */
export const pageWindow = (args: Record<string, unknown>, where: string, maxPageSize: number): { first: number; after?: string; offset?: number } => {
  for (const name of ["before", "last"]) if (args[name] != null) throw notSupported(name, where)
  const first = (args.first as number | null | undefined) ?? 100
  if (first < 0) throw new FieldError(`first: must be >= 0, got ${first}`, "INVALID_ARGUMENT", { argument: "first" })
  if (first > maxPageSize) {
    throw new FieldError(`first: ${first} exceeds the maximum page size of ${maxPageSize}`, "MAX_PAGE_SIZE_EXCEEDED", { argument: "first", maxPageSize })
  }
  const offset = args.offset as number | null | undefined
  if (offset != null && offset < 0) throw new FieldError(`offset: must be >= 0, got ${offset}`, "INVALID_ARGUMENT", { argument: "offset" })
  return { first, ...(typeof args.after === "string" ? { after: args.after } : {}), ...(offset != null ? { offset } : {}) }
}

const windowArguments = new Set(["first", "after", "offset", "before", "last", "filter", "sort"])

export const collectionQuery = (records: Records, args: Record<string, unknown>, maxPageSize: number): PageQuery => {
  const def = records.def
  const where = `\`${def.name}\``
  const predicates: Array<(index: number) => boolean> = []
  let only: Set<number> | undefined
  let created: TimeRange | undefined
  for (const [name, value] of Object.entries(args)) {
    if (windowArguments.has(name) || value == null) continue
    if (!(name in (def.arguments ?? {}))) throw notSupported(name, where)
    const narrow = def.arguments?.[name]?.(value)
    if (narrow) predicates.push((i) => narrow(records.record(i)))
  }
  const filter = (args.filter ?? {}) as Record<string, unknown>
  for (const [name, value] of Object.entries(filter)) {
    if (value == null || (name === "sort" && def.sortIn === "filter.sort")) continue
    const rule = def.filters?.[name]
    const argument = `filter.${name}`
    if (rule === undefined) throw notSupported(argument, where)
    if (rule.kind === "ids") {
      const ids = new Set<number>()
      for (const id of value as ReadonlyArray<string>) {
        const index = records.collection.indexOfId(id)
        if (index !== undefined) ids.add(index)
      }
      only = only === undefined ? ids : new Set([...only].filter((i) => ids.has(i)))
    } else if (rule.kind === "link") {
      const target = records.world.records(def.links![rule.field]!.to).collection.indexOfId(String(value))
      predicates.push((i) => target !== undefined && records.linkIndex(rule.field, i) === target)
    } else if (rule.kind === "time") {
      const range = timeRange(argument, value as Record<string, unknown>)
      if (rule.field === "createdAt") created = range
      else if (rule.field === "updatedAt") predicates.push((i) => inRange(range, records.collection.updatedMs(i)))
      else {
        predicates.push((i) => {
          const v = records.record(i)[rule.field]
          return typeof v === "string" && inRange(range, Date.parse(v))
        })
      }
    } else {
      const wanted = Array.isArray(value) ? new Set(value) : new Set([value])
      predicates.push((i) => wanted.has(records.record(i)[rule.field]))
    }
  }
  const rawSort = def.sortIn === "filter.sort" ? filter.sort : args.sort
  const sortList = (rawSort == null ? [] : Array.isArray(rawSort) ? rawSort : [rawSort]) as ReadonlyArray<{ key: string; direction: SortSpec["direction"] }>
  const sort = sortList.map((s): SortSpec => {
    if (def.sortKeys?.[s.key] === undefined) throw notSupported(`sort.key ${s.key}`, where)
    return { key: s.key, direction: s.direction }
  })
  return {
    ...pageWindow(args, where, maxPageSize),
    sort,
    ...(only !== undefined ? { only } : {}),
    ...(created !== undefined ? { created } : {}),
    ...(predicates.length > 0 ? { matches: (i: number) => predicates.every((p) => p(i)) } : {})
  }
}

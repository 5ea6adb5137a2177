import { CursorRejected, type CreatedRange, type JobStore, type SortKey, type SortSpec, supportedSortKeys } from "./JobStore.js"

/** The `jobs` connection from its (coerced) arguments: what the resolver and the fast path both serve. */

/** A `jobs` argument the emulator refuses; the caller turns it into a GraphQL error at the field. */
export class JobsArgumentError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly extra: Record<string, unknown>
  ) {
    super(message)
  }
}

const notSupported = (what: string) =>
  new JobsArgumentError(`argument ${what} is not supported by the emulator`, "ARGUMENT_NOT_SUPPORTED", { argument: what })

const parseDate = (field: string, value: unknown): number => {
  const ms = typeof value === "string" ? Date.parse(value) : NaN
  if (!Number.isFinite(ms)) throw new JobsArgumentError(`${field}: ${JSON.stringify(value)} is not an ISO 8601 date-time`, "INVALID_ARGUMENT", { argument: field })
  return ms
}

export interface JobsConnection {
  readonly nodes: ReadonlyArray<Record<string, unknown>>
  readonly edges: () => ReadonlyArray<{ cursor: string; node: Record<string, unknown> }>
  readonly pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
  readonly totalCount: () => number
}

export const jobsConnection = (args: Record<string, unknown>, store: JobStore, maxPageSize: number): JobsConnection => {
  for (const name of ["before", "last", "searchTerm"]) if (args[name] !== undefined && args[name] !== null) throw notSupported(name)
  let created: CreatedRange | undefined
  const filter = args.filter as Record<string, unknown> | null | undefined
  if (filter) {
    for (const [name, value] of Object.entries(filter)) {
      if (name !== "createdAt" && name !== "ids" && value !== undefined && value !== null) throw notSupported(`filter.${name}`)
    }
    const range = filter.createdAt as Record<string, unknown> | null | undefined
    if (range) {
      created = {
        ...(range.after != null ? { afterMs: parseDate("filter.createdAt.after", range.after) } : {}),
        ...(range.before != null ? { beforeMs: parseDate("filter.createdAt.before", range.before) } : {}),
        ...(range.eq != null ? { eqMs: parseDate("filter.createdAt.eq", range.eq) } : {})
      }
    }
  }
  const ids = filter?.ids as ReadonlyArray<string> | null | undefined
  const only = ids ? new Set(ids.flatMap((id) => { const i = store.indexOfId(id); return i === undefined ? [] : [i] })) : undefined
  const sort = ((args.sort as Array<{ key: string; direction: "ASCENDING" | "DESCENDING" }> | null | undefined) ?? []).map((s): SortSpec => {
    if (!supportedSortKeys.includes(s.key as SortKey)) throw notSupported(`sort.key ${s.key}`)
    return { key: s.key as SortKey, direction: s.direction }
  })
  const first = (args.first as number | null | undefined) ?? 100
  if (first < 0) throw new JobsArgumentError(`first: must be >= 0, got ${first}`, "INVALID_ARGUMENT", { argument: "first" })
  if (first > maxPageSize) {
    throw new JobsArgumentError(`first: ${first} exceeds the maximum page size of ${maxPageSize}`, "MAX_PAGE_SIZE_EXCEEDED", { argument: "first", maxPageSize })
  }
  let page
  try {
    const offset = args.offset as number | null | undefined
    if (offset !== undefined && offset !== null && offset < 0) throw new JobsArgumentError(`offset: must be >= 0, got ${offset}`, "INVALID_ARGUMENT", { argument: "offset" })
    page = store.page({
      sort,
      first,
      ...(typeof args.after === "string" ? { after: args.after } : {}),
      ...(typeof offset === "number" ? { offset } : {}),
      ...(created ? { created } : {}),
      ...(only ? { only } : {})
    })
  } catch (e) {
    if (e instanceof CursorRejected) throw new JobsArgumentError(e.reason, "INVALID_CURSOR", { argument: "after" })
    throw e
  }
  const nodes = page.indices.map((i) => {
    const job: Record<string, unknown> = store.job(i)
    job.client = () => store.client(i)
    return job
  })
  const head = page.indices[0]
  const last = page.indices[page.indices.length - 1]
  return {
    nodes,
    edges: () => page.indices.map((i, k) => ({ cursor: page.cursorOf(i), node: nodes[k]! })),
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: head === undefined ? null : page.cursorOf(head),
      endCursor: last === undefined ? null : page.cursorOf(last)
    },
    totalCount: () => store.count(created)
  }
}

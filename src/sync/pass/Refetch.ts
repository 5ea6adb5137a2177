import { Duration, Effect } from "effect"
import { settleById } from "./Confirmations.js"
import type { Page, Variables } from "../model.js"

/** A record a change event named: its id and when the service says it changed. */
export interface ChangedItem {
  readonly id: string
  readonly occurredAt: Date
}

/** What a refetch may ask: pages of the stream's connection (at most `atMost` rows), its count, and columns of stored rows. */
export interface RefetchReader<E> {
  readonly pages: (variables: Variables, atMost?: number) => Effect.Effect<ReadonlyArray<Page>, E>
  readonly count: (variables: Variables) => Effect.Effect<{ readonly total: number; readonly costPoints: number }, E>
  readonly stored: (ids: ReadonlyArray<string>, column: string) => Effect.Effect<ReadonlyMap<string, string | null>, E>
}

export interface Refetched {
  /** The pages read: every node in them lands (rows the events did not name too: they are as current). */
  readonly pages: ReadonlyArray<Page>
  /** Items the read proves gone (asked by id, neither returned nor counted): marked deleted. */
  readonly gone: ReadonlyArray<string>
  /** Items this read cannot reach: their stream's next full pass brings them (it is asked for). */
  readonly unreachable: ReadonlyArray<string>
  /** Points of the queries besides the pages (counts that tell a withheld record from a deleted one). */
  readonly countPoints: number
}

/** The points the service charged for a read: its pages and its counts. */
export const pointsOfRead = (read: Refetched): number => read.pages.reduce((p, page) => p + page.costPoints, 0) + read.countPoints

/**
 * How a stream reads again the records change events name: a value with behaviour, like Incremental. The consumer
 * calls `read` with the items of one account and lands what it returns; it never interprets a strategy by name.
 */
export interface Refetch {
  /** The query it uses (README). */
  readonly description: string
  readonly read: <E>(items: ReadonlyArray<ChangedItem>, reader: RefetchReader<E>) => Effect.Effect<Refetched, E>
}

const chunks = <A>(all: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size))
  return out
}

const idsIn = (pages: ReadonlyArray<Page>) => new Set(pages.flatMap((p) => p.nodes.map((n) => n.node.id)))

/**
 * The connection filters by id: the items themselves, a page of up to 100 at a time. One not returned is gone only
 * when the service does not count it either under a filter of its id (SweepPlan.byIdVerdict); one it counts it
 * withholds from the app: left as stored.
 */
export const byIds = (lookup: (ids: ReadonlyArray<string>) => Variables): Refetch => ({
  description: "by id (the connection's ids filter), up to 100 a query",
  read: (items, reader) =>
    Effect.gen(function* () {
      const ids = [...new Set(items.map((i) => i.id))]
      const pages: Array<Page> = []
      const gone: Array<string> = []
      let countPoints = 0
      const count = (missing: ReadonlyArray<string>) =>
        Effect.map(reader.count(lookup(missing)), (c) => {
          countPoints += c.costPoints
          return c.total
        })
      for (const chunk of chunks(ids, 100)) {
        const read = yield* reader.pages(lookup(chunk), chunk.length)
        pages.push(...read)
        gone.push(...(yield* settleById(chunk, [...idsIn(read)], count)).gone)
      }
      return { pages, gone, unreachable: [], countPoints }
    })
})

/**
 * The connection filters by update time but not by id: the rows updated since the earliest event, less `lead`
 * (clock differences between the event and the row). A row not returned is not proven gone (its destroy event or the
 * next full pass says so).
 */
export const updatedSinceEvents = (variables: (sinceIso: string) => Variables, lead: Duration.Duration = Duration.minutes(1)): Refetch => ({
  description: "the rows updated since the earliest event less a minute (the updatedAt filter)",
  read: (items, reader) =>
    Effect.gen(function* () {
      const earliest = Math.min(...items.map((i) => i.occurredAt.getTime()))
      const pages = yield* reader.pages(variables(new Date(earliest - Duration.toMillis(lead)).toISOString()))
      return { pages, gone: [], unreachable: [], countPoints: 0 }
    })
})

/**
 * The connection filters by a parent (properties by client) and by nothing else that finds one record: the stored
 * parent's rows; an item the warehouse does not know yet (a new record) is unreachable until the next full pass.
 */
export const byStoredParent = (column: string, variables: (parentId: string) => Variables): Refetch => ({
  description: `its ${column.replace(/_id$/, "")}'s rows (the ${column.replace(/_id$/, "")} filter), for a record already stored; a new one by the next full pass`,
  read: (items, reader) =>
    Effect.gen(function* () {
      const ids = [...new Set(items.map((i) => i.id))]
      const parents = yield* reader.stored(ids, column)
      const pages: Array<Page> = []
      for (const parent of new Set([...parents.values()].filter((p): p is string => p !== null))) pages.push(...(yield* reader.pages(variables(parent))))
      return { pages, gone: [], unreachable: ids.filter((id) => (parents.get(id) ?? null) === null), countPoints: 0 }
    })
})

import { Chunk, Context, Effect, Layer, Option, Stream } from "effect"
import { CostBudget } from "../../api/CostBudget.js"
import type { ServiceError } from "../../api/errors.js"
import { type AccountCredentials, ServiceClient } from "../../api/ServiceClient.js"
import { Walk } from "./Continuation.js"
import { RecentIds } from "./RecentIds.js"
import type { ConnectionShapeInvalid, NodeSchemaMismatch, PagingStuck } from "../errors.js"
import { mergeVariables, type Page, type Variables } from "../model.js"
import { listCount } from "./listCount.js"
import { type PagedList, pageFetcher } from "./fetchPage.js"
import { type ListPaging, nextPage } from "./nextPage.js"
import { makePageAhead } from "./pageAhead.js"
import { largestPage } from "./pageSizing.js"
import { pagingStopRequested } from "./pagingStop.js"
import type { AnyStream } from "../streams/Stream.js"

export type PagerError = ServiceError | ConnectionShapeInvalid | NodeSchemaMismatch | PagingStuck

/** How many landed ids a pass keeps to join pages on: far more than any page, so a shift is followed, not guessed. */
const recentCapacity = 2000

export interface PagesRequest<E> {
  readonly credentials: AccountCredentials<E>
  readonly stream: AnyStream
  /** The pass's order and filter. */
  readonly variables: Variables
  /** Resuming: the partition and the positions of it already paged by the pass, and the ids of its last page. */
  readonly partition?: number
  readonly position?: number
  readonly anchors?: ReadonlyArray<string>
  /** "ids": the listing (each node only its id, stream.idsDocument) instead of the nodes. */
  readonly select?: "nodes" | "ids"
  /** The most rows a partition of this list can hold (a lookup of n ids: n): pages no larger, none past it. */
  readonly atMost?: number
  /** Each page's fetch holds one of its permits while it runs (see PageGate): the pass's queries can be paused. */
  readonly gate?: PageGate
}

/**
 * The page fetches of one pass in flight at once: the page asked and the one fetched ahead. Whoever takes them all
 * (`alone`) waits for those in flight to be answered and holds off the next, so its own queries are the account's
 * only ones meanwhile: the cost budget's mirror, set from each answer, then never forgets a query still in flight.
 */
export interface PageGate {
  readonly fetch: <A, E, R>(fetch: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly alone: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const fetchesAtOnce = 2

export const makePageGate: Effect.Effect<PageGate> = Effect.map(Effect.zip(Effect.makeSemaphore(fetchesAtOnce), Effect.makeLatch(true)), ([semaphore, open]) => ({
  // closed first: a semaphore alone would let the pass's overlapping fetches take turns ahead of `alone` for as long as
  // pages are fetched ahead (up to the prefetch queue's capacity)
  fetch: (fetch) => open.whenOpen(semaphore.withPermits(1)(fetch)),
  alone: (work) => Effect.acquireUseRelease(open.close, () => semaphore.withPermits(fetchesAtOnce)(work), () => open.open)
}))

/** The pages of streams' connections, sized by the accounts' cost budgets. */
export class Pager extends Context.Tag("account-sync/Pager")<
  Pager,
  {
    /**
     * The pages of one stream's connection for one account (each partition in turn, each to the service's
     * `hasNextPage: false`), from `position`, each asked a little before where the last ended and joined on a row
     * already landed (see Continuation), always passing `first` (sized by the account's CostBudget, with each child
     * connection's inner page). A parent whose child connection says more follow gets the rest in follow-up queries
     * before its page is given out: no child is cut off. Every node and child is checked (pageNodes). While pages
     * come back full and the bucket has room, the page after the one in flight is asked too (see nextPage).
     */
    readonly pages: <E>(request: PagesRequest<E>) => Stream.Stream<Page, PagerError | E>
    /** How many rows the connection holds (every partition) in `variables`' filter; and what the count cost. */
    readonly count: <E>(
      credentials: AccountCredentials<E>,
      stream: AnyStream,
      variables: Variables
    ) => Effect.Effect<{ readonly total: number; readonly costPoints: number }, PagerError | E>
  }
>() {}

export const PagerLive = Layer.effect(
  Pager,
  Effect.gen(function* () {
    const client = yield* ServiceClient
    const budget = yield* CostBudget
    /** Streams of accounts whose service ignores `offset` (found by a pass): paged after cursors from then on. */
    const ignoresOffset = new Set<string>()

    const pages = <E>(request: PagesRequest<E>) => {
      const { credentials, stream } = request
      const partitions = stream.partitions
      const key = `${credentials.accountId}\u0000${stream.name}`
      const list: PagedList<E> = {
        client,
        budget,
        credentials,
        stream,
        listing: request.select === "ids",
        variablesOf: (partition) => mergeVariables(request.variables, partitions[partition]!),
        gated: request.gate?.fetch ?? ((fetch) => fetch)
      }
      const paging: ListPaging<E> = {
        list,
        fetch: pageFetcher(list),
        ahead: makePageAhead(),
        counts: new Map(),
        largest: largestPage(stream.maxPageSize, request.atMost),
        atMost: request.atMost,
        partitions: partitions.length,
        ignoresOffset: () => ignoresOffset.add(key)
      }
      const walkFrom = (recent: RecentIds, position: number) => new Walk(recent, position, ignoresOffset.has(key) ? "after" : "offset")
      const start = { partition: request.partition ?? 0, walk: walkFrom(new RecentIds(recentCapacity, request.anchors ?? []), request.position ?? 0), full: false }
      type At = { readonly partition: number; readonly walk: Walk; readonly full: boolean }
      // asked to stop (a worker's slice ended): no page more is asked, and the pages fetched so far still land
      return Stream.paginateChunkEffect(start, ({ partition, walk, full }: At) =>
        Effect.flatMap(pagingStopRequested, (stop) =>
          stop
            ? Effect.succeed([Chunk.empty<Page>(), Option.none<At>()] as const)
            : Effect.map(nextPage(paging, partition, walk, full), ({ page, continues, full }) => {
                if (continues) return [Chunk.of(page), Option.some<At>({ partition, walk, full })] as const
                if (partition + 1 >= partitions.length) return [Chunk.of(page), Option.none<At>()] as const
                return [Chunk.of(page), Option.some<At>({ partition: partition + 1, walk: walkFrom(new RecentIds(recentCapacity), 0), full: false })] as const
              })
        )
      ).pipe(Stream.ensuring(paging.ahead.drop))
    }

    const count = <E>(credentials: AccountCredentials<E>, stream: AnyStream, variables: Variables) =>
      Effect.reduce(stream.partitions, { total: 0, costPoints: 0 }, (sum, partition) =>
        Effect.map(listCount(client, credentials, stream, mergeVariables(variables, partition)), (one) => ({
          total: sum.total + one.total,
          costPoints: sum.costPoints + one.costPoints
        }))
      )

    return Pager.of({ pages, count })
  })
)

// the landing's batching lives in paging/pageBatches; StreamRun and the benches import it from here
export { gatherPages, gatherWindow, pageBatches, prefetchPages } from "./pageBatches.js"

import { type Cause, Chunk, Clock, Context, Duration, Effect, Either, type Exit, Fiber, Layer, Option, ParseResult, Queue, Schema, Stream } from "effect"
import { estimateQueryCost } from "../api/costEstimate.js"
import { CostBudget } from "../api/CostBudget.js"
import type { ServiceError } from "../api/errors.js"
import { type AccountCredentials, ServiceClient } from "../api/ServiceClient.js"
import { type Answer, atOffset, barrenPagesLimit, describePlace, type Place, reaskLimit, RecentIds, Walk } from "./Continuation.js"
import { ConnectionShapeInvalid, NodeSchemaMismatch, PagingStuck } from "./errors.js"
import { mergeVariables, type Page, type ReceivedNode, type Variables } from "./model.js"
import { landsFromBody } from "./landing/pageParams.js"
import { at, pageChecks } from "./pageNodes.js"
import { pageSize } from "./pageSize.js"
import type { AnyStream, ChildDefinition, Paging } from "./streams/Stream.js"

const CountSchema = Schema.Struct({ totalCount: Schema.Number })

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

/** The list moved while a parent's children were followed up: its page is asked again. */
class ParentMoved {
  readonly _tag = "ParentMoved"
  /** Points spent on the page and its follow-ups so far. */
  constructor(readonly costPoints: number) {}
}

/**
 * A page asked before the walk knew it would ask it: where the page after the one being fetched will be asked if
 * that one comes back full (Walk.nextIfFull), with the same sizes. It is used only if the walk then asks exactly
 * there with exactly those sizes; otherwise it is interrupted and nothing of it is used.
 */
interface Ahead<A, E> {
  readonly place: Place
  readonly first: number
  readonly inner: ReadonlyMap<ChildDefinition, number>
  readonly fiber: Fiber.RuntimeFiber<A, E>
}

const samePlace = (a: Place, b: Place) =>
  a._tag === "Offset" ? b._tag === "Offset" && a.offset === b.offset : b._tag === "After" && a.after === b.after

const sameSizes = (a: ReadonlyMap<ChildDefinition, number>, b: ReadonlyMap<ChildDefinition, number>) => {
  if (a.size !== b.size) return false
  for (const [child, k] of a) if (b.get(child) !== k) return false
  return true
}

/** One ask of a page: its nodes checked (their children followed up in full), what the walk needs, its cost. */
interface Fetched extends Answer {
  readonly nodes: ReadonlyArray<ReceivedNode>
  readonly body: Uint8Array | undefined
  readonly costPoints: number
  readonly fetchedAtMs: number
}

export const PagerLive = Layer.effect(
  Pager,
  Effect.gen(function* () {
    const client = yield* ServiceClient
    const budget = yield* CostBudget
    /** Streams of accounts whose service ignores `offset` (found by a pass): paged after cursors from then on. */
    const ignoresOffset = new Set<string>()

    const pages = <E>(request: PagesRequest<E>) => {
      const { credentials, stream } = request
      const { accountId } = credentials
      const listing = request.select === "ids"
      const children = listing ? [] : stream.children
      const checks = pageChecks(accountId, stream, listing)
      const documentOf = (paging: Paging) => (listing ? stream.documents[paging].ids : stream.documents[paging].page)
      const partitions = stream.partitions
      const largestPage = request.atMost === undefined ? stream.maxPageSize : Math.max(1, Math.min(stream.maxPageSize, request.atMost))
      const listEnds = (position: number) => request.atMost !== undefined && position >= request.atMost
      const variablesOf = (partition: number): Variables => mergeVariables(request.variables, partitions[partition]!)
      const placeVariables = (place: Place) => (place._tag === "Offset" ? { offset: place.offset } : { after: place.after })
      /** A page's variables: the partition's, its size and place, and each child connection's inner page. */
      const pageVariables = (partition: number, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>) => {
        const variables: Record<string, unknown> = { ...variablesOf(partition), first, ...placeVariables(place) }
        for (const [child, k] of inner) variables[child.firstVariable] = k
        return variables
      }
      const key = `${accountId}\u0000${stream.name}`

      /**
       * The rest of one parent's children. The parent is the `index`-th node of a page of `first` positions that held
       * `held` nodes: it is among the `first - held + 1` positions from its index (rows before it may have been left
       * out), so those are asked again and it is found by id; its children from `from` (the positions the page paged).
       */
      const followUp = (partition: number, page: { readonly place: Place; readonly first: number; readonly held: number; readonly cursors: ReadonlyArray<string> | undefined }, index: number, parentId: string, child: ChildDefinition, from: number) =>
        Effect.gen(function* () {
          const window = page.first - page.held + 1
          const parentAt: Place =
            page.place._tag === "Offset"
              ? { _tag: "Offset", offset: page.place.offset + index }
              : { _tag: "After", after: index === 0 ? page.place.after : (page.cursors?.[index - 1] ?? null) }
          const document = child.followUp[page.place._tag === "Offset" ? "offset" : "after"]
          const more: Array<unknown> = []
          let costPoints = 0
          let barren = 0
          for (let childOffset = from; ; ) {
            const variablesFor = (childFirst: number) => ({ ...variablesOf(partition), first: window, ...placeVariables(parentAt), childFirst, childOffset })
            const childFirst = yield* budget.pageSize(accountId, document, variablesFor, stream.maxPageSize)
            const result = yield* client.execute(credentials, document, variablesFor(childFirst))
            costPoints += result.cost?.actualQueryCost ?? 0
            const parents = yield* checks.connection(at(result.data, stream.connectionPath), page.place._tag === "Offset" ? page.place.offset : 0)
            const parent = parents.nodes.find((n) => (n as { id?: unknown } | null)?.id === parentId)
            if (parent === undefined) return yield* Effect.fail(new ParentMoved(costPoints))
            const got = yield* checks.children(parent, child, childOffset)
            more.push(...got.nodes)
            if (!got.hasNextPage) return { more, costPoints }
            barren = got.nodes.length === 0 ? barren + 1 : 0
            if (barren > barrenPagesLimit) {
              return yield* new PagingStuck({
                accountId,
                stream: stream.name,
                at: `${child.field} of ${parentId}, offset ${childOffset}`,
                detail: `${barren} pages of ${child.field} in a row held nothing while the service said more follow`
              })
            }
            childOffset += childFirst
          }
        })

      /** One ask of a page at `place`: its nodes checked, their children followed up in full, its cost. */
      const gated = request.gate?.fetch ?? (<A, E2, R>(fetch: Effect.Effect<A, E2, R>) => fetch)
      const fetch = (partition: number, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>, position: number) =>
        gated(Effect.gen(function* () {
          const document = documentOf(place._tag === "Offset" ? "offset" : "after")
          const variables = pageVariables(partition, place, first, inner)
          const fetchedAtMs = yield* Clock.currentTimeMillis
          const result = yield* client.execute(credentials, document, variables)
          let costPoints = result.cost?.actualQueryCost ?? 0
          const connection = yield* checks.connection(at(result.data, stream.connectionPath), position)
          const nodes: Array<ReceivedNode> = []
          let complete = true
          for (const [i, raw] of connection.nodes.entries()) {
            const node = checks.node(raw, position)
            if (node instanceof NodeSchemaMismatch) return yield* node
            let merged: Record<string, unknown> | undefined
            for (const child of children) {
              const got = yield* checks.children(raw, child, position)
              if (!got.hasNextPage) continue
              const page = { place, first, held: connection.nodes.length, cursors: connection.cursors }
              const rest = yield* followUp(partition, page, i, node.id, child, inner.get(child)!).pipe(
                Effect.catchIf(
                  (e): e is ParentMoved => e instanceof ParentMoved,
                  (moved) => Effect.fail(new ParentMoved(moved.costPoints + costPoints))
                )
              )
              costPoints += rest.costPoints
              if (rest.more.length === 0) continue
              merged ??= { ...(raw as Record<string, unknown>) }
              // the child connection as if it had come whole
              merged[child.field] = { nodes: [...got.nodes, ...rest.more], pageInfo: { hasNextPage: false }, totalCount: got.totalCount }
            }
            const badFields = checks.customFields(raw, node.id, position)
            if (badFields !== undefined) return yield* badFields
            if (merged !== undefined) {
              complete = false
              nodes.push({ node: { ...node, ...merged } as ReceivedNode["node"], raw: merged })
            } else nodes.push({ node, raw })
          }
          // a node completed by follow-ups is not the body as received: the page lands from its nodes
          const received = { nodes, body: complete ? result.body : undefined }
          return {
            place,
            first,
            ids: nodes.map((n) => n.node.id),
            cursors: connection.cursors,
            hasNextPage: connection.hasNextPage,
            endCursor: connection.endCursor,
            // a page that lands from its body keeps of its nodes only what the pass reads: the parsed answer is let go
            nodes: landsFromBody(received) ? nodes.map((n) => idAndUpdatedAt(stream, n)) : nodes,
            body: received.body,
            costPoints,
            fetchedAtMs
          } satisfies Fetched
        }))

      const stuck = (place: Place, detail: string) => new PagingStuck({ accountId, stream: stream.name, at: describePlace(place), detail })

      /**
       * Whether a page may be fetched ahead: the account's bucket, as mirrored, holds the points of two such pages. The
       * mirror is set from each answer, which does not count the page still in flight; with two pages' points there,
       * the page in flight and the one asked ahead both fit, so fetching ahead never draws a THROTTLED answer. Where
       * the bucket binds, pages are asked one at a time as before: the points, not the round trips, set the pace.
       */
      const roomAhead = (partition: number, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>) =>
        Effect.gen(function* () {
          const { bucket } = yield* budget.stats(accountId)
          if (bucket === undefined) return false
          return bucket.available >= 2 * (yield* budget.estimate(accountId, documentOf("offset"), pageVariables(partition, place, first, inner)))
        })

      type FetchOf = ReturnType<typeof fetch>
      type PageAhead = Ahead<Effect.Effect.Success<FetchOf>, Effect.Effect.Error<FetchOf>>
      const dropAhead = (ahead: PageAhead | undefined) => (ahead === undefined ? Effect.void : Fiber.interrupt(ahead.fiber))
      /** The last page fetched ahead: dropped when the stream ends, however it ends (a consumer may stop early). */
      let lastAhead: PageAhead | undefined

      /**
       * The next page of the partition: asked where the walk says, again until it joins the rows landed (bounded).
       * `ahead`: the page fetched ahead while the one before was fetched, used if it is the one asked. While pages come
       * back full, the page after this one is fetched ahead meanwhile (one request more in flight): the service
       * prepares it while this one is read and checked. Nothing about a page changes by being fetched early; one fetched
       * where the walk does not ask (a short page, a page asked again, the end of the list) is dropped.
       */
      const nextPage = (partition: number, walk: Walk, ahead: PageAhead | undefined, fetchAhead: boolean) => {
        let next: PageAhead | undefined
        const dropNext = Effect.suspend(() => {
          const dropped = next
          next = undefined
          return dropAhead(dropped)
        })
        return Effect.gen(function* () {
          const variablesFor = (first: number, inner: ReadonlyMap<ChildDefinition, number>) => pageVariables(partition, atOffset(0), first, inner)
          const { first, inner } = yield* pageSize(budget, accountId, documentOf(walk.pagingBy), children, largestPage, variablesFor)
          const pointsBound = reaskLimit * estimateQueryCost(documentOf(walk.pagingBy), variablesFor(first, inner))
          const firstPlace = walk.place(first)
          let place = firstPlace
          let pending = ahead !== undefined && samePlace(ahead.place, firstPlace) && ahead.first === first && sameSizes(ahead.inner, inner) ? ahead : undefined
          if (pending === undefined) yield* dropAhead(ahead)
          let wasted = 0
          const answers = new Set<string>()
          let why = ""
          // a page is asked again at most reaskLimit times, spending at most reaskLimit times the points of a full page
          // on it: past either, the stream fails naming what the service did, rather than spend the points for ever
          for (let asks = 0; ; asks++) {
            if (asks > reaskLimit || wasted > pointsBound) {
              const same = answers.size === 1 && asks > 1 ? "; every answer held the same rows, wherever the page was asked" : ""
              return yield* stuck(
                firstPlace,
                `asked ${asks} times, from ${describePlace(firstPlace)} back to ${describePlace(place)}, ${Math.round(wasted)} points spent, and the page never joined the rows landed (last: ${why}): the list keeps moving under the pass${same}`
              )
            }
            const asked = fetch(partition, place, first, inner, place._tag === "Offset" ? place.offset : walk.position)
            const guess = asks === 0 && fetchAhead ? walk.nextIfFull(place, first) : undefined
            const after = guess?._tag === "Offset" && !listEnds(guess.offset) && (yield* roomAhead(partition, guess, first, inner)) ? guess : undefined
            let fetched: Either.Either<Effect.Effect.Success<FetchOf>, Effect.Effect.Error<FetchOf>>
            if (after !== undefined) {
              // this page's request goes first (its points too), then the one after it
              const current = pending?.fiber ?? (yield* Effect.fork(asked))
              next = lastAhead = { place: after, first, inner, fiber: yield* Effect.fork(fetch(partition, after, first, inner, after.offset)) }
              fetched = yield* Effect.either(Fiber.join(current)).pipe(Effect.onInterrupt(() => Fiber.interrupt(current)))
            } else {
              fetched = yield* Effect.either(pending !== undefined ? Fiber.join(pending.fiber) : asked)
            }
            pending = undefined
            if (fetched._tag === "Left") {
              if (!(fetched.left instanceof ParentMoved)) return yield* Effect.fail(fetched.left)
              yield* dropNext
              wasted += fetched.left.costPoints
              why = "the list moved while the children of a page were followed up"
              yield* Effect.logInfo(`${describePlace(place)}: ${why}; asking the page again further back`)
              place = walk.back(first)
              continue
            }
            const page = fetched.right
            answers.add(page.ids.slice(0, 3).join(","))
            const verdict = walk.judge(page)
            if (verdict._tag === "CannotPage") return yield* stuck(place, verdict.detail)
            if (verdict._tag === "IgnoresOffset") {
              yield* Effect.logWarning(`${verdict.detail}; paging ${stream.name} after its cursors instead`)
              ignoresOffset.add(key)
              wasted += page.costPoints
              walk.useCursors()
              place = walk.place(first)
              yield* dropNext
              continue
            }
            if (verdict._tag === "AskAgain") {
              why = verdict.why
              yield* Effect.logInfo(`${describePlace(place)}: ${verdict.why}`)
              wasted += page.costPoints
              place = verdict.place
              yield* dropNext
              continue
            }
            walk.landed(page)
            if (walk.barrenPages > barrenPagesLimit) {
              return yield* stuck(place, `${walk.barrenPages} pages in a row brought no row the pass had not landed while the service said more follow`)
            }
            if (!verdict.checked) yield* Effect.logInfo(`${describePlace(place)}: the page could not be checked against the rows landed (too few rows around it); the pass will list its ids before marking anything deleted`)
            const reread = page.nodes.length > 0 ? (page.costPoints * verdict.newFrom) / page.nodes.length : 0
            const continues = page.hasNextPage && !listEnds(walk.position)
            const landed: Page = {
              partition,
              offset: place._tag === "Offset" ? place.offset : walk.position - first,
              first,
              nodes: page.nodes,
              newFrom: verdict.newFrom,
              position: walk.position,
              mayHaveMore: continues || partition + 1 < partitions.length,
              body: page.body,
              shifted: verdict.shifted,
              checked: verdict.checked,
              costPoints: page.costPoints,
              fetchedAtMs: page.fetchedAtMs,
              overheadPoints: wasted + reread
            }
            // the page after, fetched ahead, is of this partition's list: kept while the list continues
            const full = continues && page.nodes.length === first
            if (!continues) yield* dropNext
            return { page: landed, continues, full, ahead: next }
          }
        }).pipe(Effect.onError(() => dropNext))
      }

      const walkFrom = (recent: RecentIds, position: number) => new Walk(recent, position, ignoresOffset.has(key) ? "after" : "offset")
      const start = {
        partition: request.partition ?? 0,
        walk: walkFrom(new RecentIds(recentCapacity, request.anchors ?? []), request.position ?? 0),
        ahead: undefined as PageAhead | undefined,
        full: false
      }
      return Stream.paginateEffect(start, ({ partition, walk, ahead, full }) =>
        Effect.map(nextPage(partition, walk, ahead, full), ({ page, continues, full, ahead }) => {
          if (continues) return [page, Option.some({ partition, walk, ahead, full })] as const
          if (partition + 1 >= partitions.length) return [page, Option.none()] as const
          return [page, Option.some({ partition: partition + 1, walk: walkFrom(new RecentIds(recentCapacity), 0), ahead: undefined, full: false })] as const
        })
      ).pipe(Stream.ensuring(Effect.suspend(() => dropAhead(lastAhead))))
    }

    const count = <E>(credentials: AccountCredentials<E>, stream: AnyStream, variables: Variables) =>
      Effect.gen(function* () {
        let total = 0
        let costPoints = 0
        for (const partition of stream.partitions) {
          const { sort: _, ...rest } = mergeVariables(variables, partition) as Record<string, unknown>
          const result = yield* client.execute(credentials, stream.countDocument, rest)
          const decoded = Schema.decodeUnknownEither(CountSchema)(at(result.data, stream.connectionPath))
          if (decoded._tag === "Left") {
            return yield* new ConnectionShapeInvalid({
              accountId: credentials.accountId,
              stream: stream.name,
              position: null,
              detail: `totalCount: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
            })
          }
          total += decoded.right.totalCount
          costPoints += result.cost?.actualQueryCost ?? 0
        }
        return { total, costPoints }
      })

    return Pager.of({ pages, count })
  })
)

/**
 * What a pass reads of a node that lands from its page's body: its id and updatedAt (the checkpoint's anchors and
 * mark, the records an incremental pass finds changed). A page waiting to land then holds its body's bytes, not the
 * parsed answer (about four times their size on the heap).
 */
const idAndUpdatedAt = (stream: AnyStream, n: ReceivedNode): ReceivedNode => {
  const kept = stream.updatedAt === undefined ? { id: n.node.id } : { id: n.node.id, updatedAt: stream.updatedAt(n.node) }
  return { node: kept, raw: kept }
}

/** Pages fetched ahead of the one landing, at most: a bound on memory (a page of 100 jobs is ~100 KB of JSON). */
export const prefetchPages = 20

/**
 * A batch of fewer pages than this waits up to `gatherWindow` for more before it lands: each page statement has a
 * cost of its own (planning, the lease check, the checkpoint, the commit), so when pages come faster than they land,
 * fewer and larger statements land more rows per CPU second. Without the wait, a 200,000-job backfill landed 940
 * batches, 695 of one or two pages; with it (8 pages, 15 ms) and then this (16 pages, 25 ms), the landing benchmark
 * gained about 4% and 5% (A/B in one session; 32 pages and 50 ms gained nothing more). Pages that come seconds apart
 * (a bucket that binds) land each after the window, a few ms later.
 */
export const gatherPages = 16
export const gatherWindow = Duration.millis(25)

/**
 * The window is real time even under a test's clock: it is a pause for the fetching fiber to catch up, never a rule
 * of the service's, and it must not add a sleep for a test's TestClock to step through.
 */
const liveClock = Clock.make()

/**
 * Consecutive pages in batches, each to be landed by one statement. With `prefetch`, a fiber fetches ahead into a
 * queue of `prefetchPages` while the previous batch lands, and a batch is every page waiting there (at least one,
 * gathered for up to `gatherWindow` when fewer than `gatherPages` wait): HTTP and Postgres overlap instead of taking
 * turns, and the pages that queued up meanwhile share one statement and one commit. Without `prefetch`, one page per
 * batch and nothing runs ahead.
 * A page that was fetched but never landed (interruption, an incremental pass that stops) is simply dropped: its
 * cursor was never stored. A failure reaches the consumer after the pages fetched before it.
 */
export const pageBatches = <E, R>(
  source: Stream.Stream<Page, E, R>,
  options: { readonly prefetch: boolean }
): Stream.Stream<ReadonlyArray<Page>, E, R> => {
  if (!options.prefetch) return Stream.map(source, (page) => [page])
  return Stream.unwrapScoped(
    Effect.map(Stream.toQueueOfElements(source, { capacity: prefetchPages }), (queue) => {
      // the end or failure that arrived behind pages in one take: given out on the next pull
      let ending: Cause.Cause<Option.Option<E>> | undefined
      const ended = (exits: Chunk.Chunk<Exit.Exit<Page, Option.Option<E>>>) => Chunk.some(exits, (exit) => exit._tag === "Failure")
      const gathered = Effect.flatMap(Queue.takeBetween(queue, 1, prefetchPages), (first) =>
        first.length >= gatherPages || ended(first)
          ? Effect.succeed(first)
          : Effect.sleep(gatherWindow).pipe(
              Effect.withClock(liveClock),
              Effect.zipRight(Queue.takeUpTo(queue, prefetchPages - first.length)),
              Effect.map((more) => Chunk.appendAll(first, more))
            )
      )
      const nextBatch: Effect.Effect<ReadonlyArray<Page>, Option.Option<E>> = Effect.suspend(() => {
        if (ending !== undefined) return Effect.failCause(ending)
        return Effect.flatMap(gathered, (exits) => {
          const batch: Array<Page> = []
          for (const exit of exits) {
            if (exit._tag === "Success") batch.push(exit.value)
            else {
              ending = exit.cause
              break
            }
          }
          return batch.length > 0 ? Effect.succeed(batch) : Effect.failCause(ending!)
        })
      })
      return Stream.repeatEffectOption(nextBatch)
    })
  )
}

import { Effect, Either, Fiber } from "effect"
import { staticQueryCost } from "../../api/costEstimate.js"
import { barrenPagesLimit, type Walk } from "./Continuation.js"
import { atOffset, describePlace, type Place } from "./place.js"
import { PagingStuck } from "../errors.js"
import type { Page } from "../model.js"
import { pageSize } from "./pageSize.js"
import type { ChildDefinition } from "../streams/Stream.js"
import { afterJoin, aheadPlace, type Asked, hasRoomAhead } from "./fetchAhead.js"
import { documentOf, type Fetched, type PagedList, pageFetcher, ParentMoved } from "./fetchPage.js"
import { landedPage } from "./landedPage.js"
import type { PageAhead } from "./pageAhead.js"
import { pageVariables } from "./pageVariables.js"
import { sizedToRest } from "./sizedToRest.js"
import { answered, askAgain, type Asking, firstAsk, nextAsk, pointsBound } from "./reask.js"

type Fetch<E> = ReturnType<typeof pageFetcher<E>>
type FetchError<E> = Effect.Effect.Error<ReturnType<Fetch<E>>>

/** One list of one pass being paged: what each of its pages needs. */
export interface ListPaging<E> {
  readonly list: PagedList<E>
  readonly fetch: Fetch<E>
  readonly ahead: PageAhead<Fetched, FetchError<E>>
  /** The largest page, and the most rows a partition holds (a lookup of n ids: n). */
  readonly largest: number
  readonly atMost: number | undefined
  readonly partitions: number
  /** Each partition's count of rows, once asked (see sizedToRest). */
  readonly counts: Map<number, number>
  /** The service ignores `offset` for this account's stream: told to the Pager, which pages after cursors from then on. */
  readonly ignoresOffset: () => void
}

/** A page given out, whether its partition's list continues, and whether the next page is fetched ahead. */
export interface NextPage {
  readonly page: Page
  readonly continues: boolean
  readonly full: boolean
}

const stuck = <E>(l: ListPaging<E>, place: Place, detail: string) =>
  new PagingStuck({ accountId: l.list.credentials.accountId, stream: l.list.stream.name, at: describePlace(place), detail })

/** Whether the bucket has room for the page ahead (hasRoomAhead). */
const roomAhead = <E>(l: ListPaging<E>, partition: number, asked: Asked) =>
  Effect.gen(function* () {
    const { budget, credentials, stream, listing } = l.list
    const { bucket } = yield* budget.stats(credentials.accountId)
    if (bucket === undefined) return false
    const variables = pageVariables(l.list.variablesOf(partition), asked.place, asked.first, asked.inner)
    return hasRoomAhead(bucket.available, yield* budget.estimate(credentials.accountId, documentOf(stream, listing, "offset"), variables))
  })

/**
 * One ask of the page: the page fetched ahead when it is this one (`pending`), else fetched now; and, on a first ask
 * after a full page with room in the bucket, the page after it fetched meanwhile (this page's request goes first).
 */
const askOnce = <E>(l: ListPaging<E>, partition: number, walk: Walk, asking: Asking, asked: Asked, pending: Fiber.RuntimeFiber<Fetched, FetchError<E>> | undefined, lastFull: boolean) =>
  Effect.gen(function* () {
    const { place, first, inner } = asked
    const now = l.fetch(partition, place, first, inner, place._tag === "Offset" ? place.offset : walk.position)
    const guess = aheadPlace({ asks: asking.asks, lastFull, guess: walk.nextIfFull(place, first), atMost: l.atMost })
    const after = guess !== undefined && (yield* roomAhead(l, partition, { place: guess, first, inner })) ? guess : undefined
    if (after === undefined && pending === undefined) return yield* Effect.either(now)
    const current = pending ?? (yield* Effect.fork(now))
    if (after?._tag === "Offset") yield* l.ahead.start({ place: after, first, inner }, l.fetch(partition, after, first, inner, after.offset))
    return yield* Effect.either(Fiber.join(current)).pipe(Effect.onInterrupt(() => Fiber.interrupt(current)))
  })

/**
 * The next page of the partition: asked where the walk says, again until it joins the rows landed, within the re-ask
 * bound (reask). `lastFull`: the page before came back full, so the page after this one may be fetched ahead.
 */
export const nextPage = <E>(l: ListPaging<E>, partition: number, walk: Walk, lastFull: boolean) =>
  Effect.gen(function* () {
    const { budget, credentials, stream, listing } = l.list
    const document = documentOf(stream, listing, walk.pagingBy)
    const variablesFor = (first: number, inner: ReadonlyMap<ChildDefinition, number>) => pageVariables(l.list.variablesOf(partition), atOffset(0), first, inner)
    const children = listing ? [] : stream.children
    const full = yield* pageSize(budget, credentials.accountId, document, children, l.largest, variablesFor)
    const { first, inner, countPoints } = yield* sizedToRest(l, partition, walk.place(full.first), document, full)
    const bound = pointsBound(staticQueryCost(document, variablesFor(first, inner)))
    const firstPlace = walk.place(first)
    const pending = yield* l.ahead.take({ place: firstPlace, first, inner })
    for (let asking = firstAsk(firstPlace, countPoints); ; ) {
      const next = nextAsk(asking, bound)
      if (next._tag === "Stuck") return yield* stuck(l, firstPlace, next.detail)
      const { place } = asking
      const fetched = yield* askOnce(l, partition, walk, asking, { place, first, inner }, asking.asks === 0 ? pending : undefined, lastFull)
      if (Either.isLeft(fetched)) {
        if (!(fetched.left instanceof ParentMoved)) return yield* Effect.fail(fetched.left)
        yield* l.ahead.drop
        const why = "the list moved while the children of a page were followed up"
        yield* Effect.logInfo(`${describePlace(place)}: ${why}; asking the page again further back`)
        asking = askAgain(asking, walk.back(first), fetched.left.costPoints, why)
        continue
      }
      const page = fetched.right
      const verdict = walk.judge(page)
      const seen = answered(asking, page.ids)
      if (verdict._tag === "CannotPage") return yield* stuck(l, place, verdict.detail)
      if (verdict._tag === "IgnoresOffset") {
        yield* Effect.logWarning(`${verdict.detail}; paging ${stream.name} after its cursors instead`)
        l.ignoresOffset()
        walk.useCursors()
        asking = askAgain(seen, walk.place(first), page.costPoints)
        yield* l.ahead.drop
        continue
      }
      if (verdict._tag === "AskAgain") {
        yield* Effect.logInfo(`${describePlace(place)}: ${verdict.why}`)
        asking = askAgain(seen, verdict.place, page.costPoints, verdict.why)
        yield* l.ahead.drop
        continue
      }
      walk.landed(page)
      if (walk.barrenPages > barrenPagesLimit) {
        return yield* stuck(l, place, `${walk.barrenPages} pages in a row brought no row the pass had not landed while the service said more follow`)
      }
      if (!verdict.checked) yield* Effect.logInfo(`${describePlace(place)}: the page could not be checked against the rows landed (too few rows around it); the pass will list its ids before marking anything deleted`)
      const { continues, full } = afterJoin({ hasNextPage: page.hasNextPage, held: page.nodes.length, first, position: walk.position, atMost: l.atMost })
      const mayHaveMore = continues || partition + 1 < l.partitions
      const landed = landedPage({ partition, place, first, page, verdict, position: walk.position, wasted: asking.wasted, mayHaveMore })
      // the page after, fetched ahead, is of this partition's list: kept while the list continues
      if (!continues) yield* l.ahead.drop
      return { page: landed, continues, full } satisfies NextPage
    }
  }).pipe(Effect.onError(() => l.ahead.drop))

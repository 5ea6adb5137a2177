import { Effect } from "effect"
import type { DocumentNode } from "graphql"
import { listCount } from "./listCount.js"
import type { PagedList } from "./fetchPage.js"
import type { PageSize } from "./pageSize.js"
import { pageVariables } from "./pageVariables.js"
import type { Place } from "./place.js"

/** A page's size fitted to the rows left in its list, and the points spent on counting them (0 when not counted). */
export interface SizedPage extends PageSize {
  readonly countPoints: number
}

/** What of a list being paged (nextPage's ListPaging) the sizing reads. */
interface RestOfList<E> {
  readonly list: PagedList<E>
  readonly atMost: number | undefined
  readonly counts: Map<number, number>
  readonly ahead: { readonly holds: () => boolean }
}

/**
 * The page at `place` no larger than the rows left in its partition's list. A list's last page is mostly smaller than a
 * full one, yet a page sized by the full bucket waits for a full bucket's points before it is asked: across a fleet of
 * small accounts whose buckets bind, that wait is most of each account's time. So when the bucket, as mirrored, cannot
 * hold the page now, the partition's count is asked (a couple of points and one request, once per partition, again
 * only when the list grew past it) and the page is cut to the rows the count leaves; the count's points go to the page's
 * overhead. Only where pages are asked by offset (the count says nothing of a cursor), the list has no bound of its own
 * (`atMost`) and no page is held ahead (it was asked with the full size).
 */
export const sizedToRest = <E>(l: RestOfList<E>, partition: number, place: Place, document: DocumentNode, size: PageSize) =>
  Effect.gen(function* () {
    const unchanged: SizedPage = { ...size, countPoints: 0 }
    if (place._tag !== "Offset" || l.atMost !== undefined || l.ahead.holds()) return unchanged
    const { budget, credentials, stream, client } = l.list
    const { bucket } = yield* budget.stats(credentials.accountId)
    if (bucket === undefined) return unchanged
    const variables = l.list.variablesOf(partition)
    const cost = yield* budget.estimate(credentials.accountId, document, pageVariables(variables, place, size.first, size.inner))
    if (bucket.available >= cost) return unchanged
    let countPoints = 0
    let total = l.counts.get(partition)
    if (total === undefined || total <= place.offset) {
      const counted = yield* l.list.gated(listCount(client, credentials, stream, variables))
      // a fresh count that leaves no row where the list goes on does not count what its pages hold: not used again
      total = counted.total > place.offset ? counted.total : Number.POSITIVE_INFINITY
      countPoints = counted.costPoints
      l.counts.set(partition, total)
    }
    const rest = total - place.offset
    return rest >= size.first ? { ...size, countPoints } : { ...size, first: Math.max(1, rest), countPoints }
  })

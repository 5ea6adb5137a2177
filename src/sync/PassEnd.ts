import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Metric, Stream } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import * as Metrics from "../observability/metrics.js"
import { leasedTransaction } from "./AccountLeases.js"
import type { AccountLockLost } from "./errors.js"
import { Checkpoints, type DeletionsCheck } from "./Checkpoints.js"
import type { Page, Variables } from "./model.js"
import { Pager, type PagerError } from "./Pager.js"
import type { AnyStream } from "./streams/Stream.js"
import { Warehouse } from "./Warehouse.js"

export interface PassEndResult {
  /** Rows marked deleted: gone from the service, and confirmed gone. */
  readonly deleted: number
  /** Sweep candidates found alive at the service, landed (or kept, when it counts them but withholds them). */
  readonly confirmed: number
  /** Points spent on the checks: the count, a listing of the ids, re-reads of the candidates. */
  readonly overheadPoints: number
  /** Whether the connection was listed (the pass saw the list move, or its count did not match). */
  readonly listed: boolean
  /** Why nothing was marked deleted (the listing the sweep needed was incomplete); undefined when deletions were checked. */
  readonly unchecked?: string
}

/** Sweep candidates re-read per round. */
const candidatesPerRound = 500

/** A listing of the connection's ids (the pass's seen ids from then on), and whether it proves what it did not see gone. */
interface Listing {
  /** Why it proves nothing: a page it could not check, or the service counting more rows than it paged; else undefined. */
  readonly incomplete: string | undefined
  /** Rows the service counts (after the listing) beyond the ids it listed: rows it withholds from the app. */
  readonly withheld: number
}

/**
 * The end of a full pass, in one transaction under the account's lease: when the pass is still in progress, the live
 * rows it did not see are marked deleted (unless `deletions` says they were not checked) and the pass finishes,
 * recording what it could say about deletions. Checkpoints ends the pass; the Warehouse sweeps its rows.
 */
export const finishFullPass = (accountId: string, stream: AnyStream, deletions: DeletionsCheck = { unchecked: null, withheld: null }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checkpoints = yield* Checkpoints
    const warehouse = yield* Warehouse
    return yield* leasedTransaction(
      sql,
      accountId,
      stream.name,
      checkpoints.finishFull(accountId, stream.name, deletions, (seen) => warehouse.sweep(accountId, stream, seen))
    )
  })

/**
 * The end of a full pass that reached the end of its connection (`hasNextPage: false`): it marks deleted only rows
 * that are gone, and only on a complete listing.
 * - A count of the connection checks the pass: when the list moved under it (a page did not join where it would have,
 *   or could not be checked) or the count differs from the rows it landed, the connection is listed (ids only) and
 *   the listing replaces what the pass saw.
 * - A listing proves rows gone only when it is complete: every page joined the one before (no gap), and the service
 *   did not count more rows than the positions it paged before it said the list ended. Otherwise nothing is marked
 *   deleted this pass (logged, counted in account_sync_sweeps_skipped_total, shown by `status`). A count above the ids
 *   a complete listing saw is rows the service withholds from the app: logged and shown, not taken for missing rows.
 * - The candidates (live rows not seen) are confirmed absent before they are marked: re-read by id where the
 *   connection filters by id (a candidate found alive is landed), and one not returned is marked only when the service
 *   does not count it either (it may count a row it withholds: that row is kept); elsewhere by the listing.
 * Under no change, that is one count query: a pass that saw no shift and landed as many rows as the connection holds
 * has every row (see Continuation), and nothing was deleted since it began.
 */
export class PassEnd extends Context.Tag("account-sync/PassEnd")<
  PassEnd,
  {
    readonly finish: <E>(request: {
      readonly credentials: AccountCredentials<E>
      readonly stream: AnyStream
      readonly variables: Variables
      readonly shifted: boolean
      readonly tracksSeen: boolean
    }) => Effect.Effect<PassEndResult, PagerError | SqlError.SqlError | AccountLockLost | E>
  }
>() {}

export const PassEndLive = Layer.effect(
  PassEnd,
  Effect.gen(function* () {
    const pager = yield* Pager
    const checkpoints = yield* Checkpoints
    const warehouse = yield* Warehouse
    const context = yield* Effect.context<SqlClient.SqlClient | Checkpoints | Warehouse>()
    const endPass = (accountId: string, stream: AnyStream, deletions: DeletionsCheck) =>
      Effect.provide(finishFullPass(accountId, stream, deletions), context)

    const finish = <E>({ credentials, stream, variables, shifted, tracksSeen }: Parameters<PassEnd["Type"]["finish"]>[0] & { readonly credentials: AccountCredentials<E> }) =>
      Effect.gen(function* () {
        const { accountId } = credentials
        let overheadPoints = 0
        const count = (of: Variables) => Effect.tap(pager.count(credentials, stream, of), (c) => void (overheadPoints += c.costPoints))

        const listIds: Effect.Effect<Listing, PagerError | SqlError.SqlError | E> = Effect.gen(function* () {
          yield* checkpoints.restartSeen(accountId, stream.name)
          let unchecked = 0
          const paged = new Map<number, number>()
          yield* pager.pages({ credentials, stream, variables, select: "ids" }).pipe(
            Stream.runForEach((page) =>
              Effect.gen(function* () {
                overheadPoints += page.costPoints
                if (!page.checked) unchecked++
                paged.set(page.partition, page.position)
                yield* checkpoints.recordSeen(accountId, stream.name, page.nodes.map((n) => n.node.id))
              })
            )
          )
          const { total } = yield* count(variables)
          const listed = yield* checkpoints.seenCount(accountId, stream)
          const positions = [...paged.values()].reduce((a, b) => a + b, 0)
          const incomplete =
            unchecked > 0
              ? `${unchecked} page(s) of the listing could not be checked against the page before (too few rows around them)`
              : total > positions
                ? `the service said the list ends after ${positions} positions but counts ${total} rows`
                : undefined
          return { incomplete, withheld: Math.max(0, total - listed) }
        })

        /** Of rows a lookup by id did not return, those the service does not count either: gone (the rest it withholds). */
        const notCounted = (ids: ReadonlyArray<string>, lookup: (ids: ReadonlyArray<string>) => Variables): Effect.Effect<ReadonlyArray<string>, PagerError | E> =>
          Effect.gen(function* () {
            const { total } = yield* count(lookup(ids))
            if (total === 0) return ids
            if (total >= ids.length || ids.length === 1) return []
            const half = Math.ceil(ids.length / 2)
            return [...(yield* notCounted(ids.slice(0, half), lookup)), ...(yield* notCounted(ids.slice(half), lookup))]
          })

        const skipSweep = (reason: string) =>
          Effect.gen(function* () {
            yield* Effect.logWarning(`${stream.name}: deletions not checked: listing incomplete (${reason}); no row is marked deleted by this pass`)
            yield* Metric.increment(Metrics.forAccount(Metrics.sweepsSkipped, accountId))
            yield* endPass(accountId, stream, { unchecked: `listing incomplete: ${reason}`, withheld: null })
            return { deleted: 0, confirmed: 0, overheadPoints, listed: true, unchecked: reason } satisfies PassEndResult
          })

        const seen = yield* checkpoints.seenCount(accountId, stream)
        const { total } = yield* count(variables)
        let listing: Listing | undefined
        if (shifted || total !== seen) {
          yield* Effect.logInfo(
            `${stream.name}: the list changed during the full pass, or the service withholds rows (${shifted ? "it moved under the pass" : `${total} rows at the service, ${seen} landed`}); listing its ids before the sweep`
          )
          listing = yield* listIds
          if (listing.incomplete !== undefined) return yield* skipSweep(listing.incomplete)
        }

        let confirmed = 0
        if (tracksSeen || listing !== undefined) {
          let after = ""
          for (;;) {
            const candidates = yield* checkpoints.unseen(accountId, stream, after, candidatesPerRound)
            if (candidates.length === 0) break
            after = candidates[candidates.length - 1]!
            if (stream.lookup !== undefined) {
              const pages: Array<Page> = []
              let fetchedAtMs = Number.POSITIVE_INFINITY
              yield* pager.pages({ credentials, stream, variables: stream.lookup(candidates), atMost: candidates.length }).pipe(
                Stream.runForEach((page) =>
                  Effect.sync(() => {
                    overheadPoints += page.costPoints
                    fetchedAtMs = Math.min(fetchedAtMs, page.fetchedAtMs)
                    pages.push(page)
                  })
                )
              )
              const alive = pages.flatMap((page) => page.nodes)
              if (alive.length > 0) {
                yield* Effect.logInfo(`${stream.name}: ${alive.length} row(s) missed by the pass are alive at the service: landed, not deleted`)
                yield* warehouse.land({ accountId, stream, pages, pass: undefined, recordSeen: true, fetchedAt: new Date(fetchedAtMs) })
                confirmed += alive.length
              }
              const returned = new Set(alive.map((n) => n.node.id))
              const missing = candidates.filter((id) => !returned.has(id))
              if (missing.length > 0) {
                const gone = new Set(yield* notCounted(missing, stream.lookup))
                const withheld = missing.filter((id) => !gone.has(id))
                if (withheld.length > 0) {
                  yield* Effect.logInfo(`${stream.name}: ${withheld.length} row(s) the service counts but does not return to this app: kept, not marked deleted`)
                  yield* checkpoints.recordSeen(accountId, stream.name, withheld)
                  confirmed += withheld.length
                }
              }
            } else if (listing === undefined) {
              // no way to ask for these rows alone: a listing of the connection confirms them gone (or not)
              listing = yield* listIds
              if (listing.incomplete !== undefined) return yield* skipSweep(listing.incomplete)
              after = ""
            } else {
              // listed: the candidates are not in the connection as it stands
            }
          }
        }
        const withheld = listing?.withheld ?? null
        if (withheld !== null && withheld > 0) {
          yield* Effect.logInfo(`${stream.name}: the service counts ${withheld} row(s) more than it lists: it withholds them from this app (not taken for missing rows)`)
        }
        const { deleted } = yield* endPass(accountId, stream, { unchecked: null, withheld })
        return { deleted, confirmed, overheadPoints, listed: listing !== undefined }
      }).pipe(Effect.withSpan("sync.passEnd", { attributes: { accountId: credentials.accountId, stream: stream.name } }))

    return PassEnd.of({ finish })
  })
)

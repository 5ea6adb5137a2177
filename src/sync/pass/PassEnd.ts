import { SqlClient, type SqlError } from "@effect/sql"
import { Chunk, Context, Effect, Layer, Metric, Ref, Stream } from "effect"
import type { AccountCredentials } from "../../api/ServiceClient.js"
import * as Metrics from "../../observability/metrics.js"
import { leasedTransaction } from "../AccountLeases.js"
import type { AccountLockLost } from "../errors.js"
import { Checkpoints, type DeletionsCheck } from "./Checkpoints.js"
import type { Variables } from "../model.js"
import { Pager, type PagerError } from "../paging/Pager.js"
import type { AnyStream, Near } from "../streams/Stream.js"
import { nothingSettled, settle, settleById, type Settled } from "./Confirmations.js"
import {
  byValueVerdict,
  candidateStep,
  type Kept,
  listingNeeded,
  listingVerdict,
  type ListingVerdict,
  type Proof,
  undecidedNote
} from "./SweepPlan.js"
import { Warehouse } from "../landing/Warehouse.js"

export interface PassEndResult {
  /** Rows marked deleted: gone from the service, and proven gone. */
  readonly deleted: number
  /** Sweep candidates found alive at the service (landed), or kept live: withheld from the app, or not decided. */
  readonly confirmed: number
  /** Points spent on the checks: the count, a listing of the ids, the questions about the candidates. */
  readonly overheadPoints: number
  /** Whether the connection was listed (the pass saw the list move, or its count did not match). */
  readonly listed: boolean
  /** Why some candidates were kept live undecided (SweepPlan.undecidedNote); undefined when every one was decided. */
  readonly unchecked?: string
}

/** Sweep candidates read per round. */
const candidatesPerRound = 500

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
 * The end of a full pass that reached the end of its connection (`hasNextPage: false`). It gathers the facts and
 * applies the decisions of SweepPlan: the count of the connection, a listing of its ids where the stream's proof
 * needs one, and for each round of candidates (live rows the pass did not see) the questions SweepPlan asks (by id,
 * by a stored value); alive ones are landed, withheld or undecided ones recorded as seen (kept live), and the sweep
 * marks deleted the rest: the candidates proven gone. Rows kept undecided are logged, counted in
 * account_sync_sweeps_skipped_total and shown by `status`.
 * Under no change, that is one count query: a pass that saw no shift and landed as many rows as the
 * connection holds has every row (see Continuation), and nothing was deleted since it began.
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

/** How a stream's candidates are proven absent: by id where it filters by id, else by a stored value, else a listing. */
export const proofOf = (stream: AnyStream): Proof => (stream.lookup !== undefined ? "ById" : stream.near !== undefined ? "Near" : "ListingOnly")

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
        const spent = yield* Ref.make(0)
        const spend = (points: number) => Ref.update(spent, (n) => n + points)
        const count = (of: Variables) => Effect.tap(pager.count(credentials, stream, of), (c) => spend(c.costPoints))

        /** The connection's ids, the pass's seen ids from then on: what SweepPlan.listingVerdict needs of them. */
        const listIds: Effect.Effect<ListingVerdict, PagerError | SqlError.SqlError | E> = Effect.gen(function* () {
          yield* checkpoints.restartSeen(accountId, stream.name)
          const paged = new Map<number, { readonly position: number; readonly unchecked: number }>()
          yield* pager.pages({ credentials, stream, variables, select: "ids" }).pipe(
            Stream.runForEach((page) =>
              Effect.zipRight(
                Effect.sync(() => paged.set(page.partition, { position: page.position, unchecked: (paged.get(page.partition)?.unchecked ?? 0) + (page.checked ? 0 : 1) })),
                Effect.zipRight(spend(page.costPoints), checkpoints.recordSeen(accountId, stream.name, page.nodes.map((n) => n.node.id)))
              )
            )
          )
          const { total } = yield* count(variables)
          const listed = yield* checkpoints.seenCount(accountId, stream)
          const parts = [...paged.values()]
          const verdict = listingVerdict({
            uncheckedPages: parts.reduce((n, p) => n + p.unchecked, 0),
            total,
            positions: parts.reduce((n, p) => n + p.position, 0),
            listed
          })
          if (!verdict.decisive) yield* Effect.logInfo(`${stream.name}: the listing does not prove unlisted rows gone (${verdict.why}); each is asked for before it is marked`)
          return verdict
        })

        /** Pages of `of` (nodes), landed as rows seen by the pass; the ids they hold. */
        const landAll = (of: Variables, atMost: number | undefined) =>
          Effect.gen(function* () {
            const pages = yield* pager.pages({ credentials, stream, variables: of, ...(atMost === undefined ? {} : { atMost }) }).pipe(
              Stream.tap((page) => spend(page.costPoints)),
              Stream.runCollect,
              Effect.map(Chunk.toReadonlyArray)
            )
            const nodes = pages.flatMap((page) => page.nodes)
            if (nodes.length > 0) {
              const fetchedAtMs = Math.min(...pages.map((page) => page.fetchedAtMs))
              yield* warehouse.land({ accountId, stream, pages: [...pages], pass: undefined, recordSeen: true, fetchedAt: new Date(fetchedAtMs) })
            }
            return nodes.map((n) => n.node.id)
          })

        const counted = (of: Variables) => Effect.map(count(of), (c) => c.total)

        const confirmById = (ids: ReadonlyArray<string>, lookup: (ids: ReadonlyArray<string>) => Variables) =>
          ids.length === 0 ? Effect.succeed(nothingSettled) : Effect.flatMap(landAll(lookup(ids), ids.length), (returned) => settleById(ids, returned, (missing) => counted(lookup(missing))))

        const confirmByValue = (value: string, ids: ReadonlyArray<string>, near: Near) =>
          Effect.flatMap(landAll(near.variables(value), undefined), (returned) =>
            settle(byValueVerdict({ asked: ids, returned, counted: undefined }), () => counted(near.variables(value)), byValueVerdict, returned)
          )

        const proof = proofOf(stream)
        const seen = yield* checkpoints.seenCount(accountId, stream)
        const { total } = yield* count(variables)
        let listing: ListingVerdict | undefined
        if (listingNeeded({ shifted, total, seen })) {
          yield* Effect.logInfo(
            `${stream.name}: the list changed during the full pass, or the service withholds rows (${shifted ? "it moved under the pass" : `${total} rows at the service, ${seen} landed`}); listing its ids before the sweep`
          )
          listing = yield* listIds
        }

        const kept: Array<Kept> = []
        let alive = 0
        let gone = 0
        if (tracksSeen || listing !== undefined) {
          let after = ""
          for (;;) {
            const candidates = yield* checkpoints.unseen(accountId, stream, after, candidatesPerRound)
            if (candidates.length === 0) break
            const step = candidateStep(proof, candidates, listing)
            if (step._tag === "ListFirst") {
              listing = yield* listIds
              after = ""
              continue
            }
            after = candidates[candidates.length - 1]!.id
            const answers: Array<Settled> = [{ alive: [], gone: step.mark, keep: step.keep }]
            if (stream.lookup !== undefined) answers.push(yield* confirmById(step.byId, stream.lookup))
            if (stream.near !== undefined) {
              for (const [value, ids] of step.byValue) answers.push(yield* confirmByValue(value, ids, stream.near))
            }
            const round = { alive: answers.flatMap((a) => a.alive), gone: answers.flatMap((a) => a.gone), keep: answers.flatMap((a) => a.keep) }
            // kept rows are recorded as seen: the sweep marks only what is left, the candidates proven gone
            if (round.keep.length > 0) yield* checkpoints.recordSeen(accountId, stream.name, round.keep.map((k) => k.id))
            kept.push(...round.keep)
            alive += round.alive.length
            gone += round.gone.length
          }
        }
        if (alive > 0) yield* Effect.logInfo(`${stream.name}: ${alive} row(s) missed by the pass are alive at the service: landed, not deleted`)
        const withheldKept = kept.filter((k) => k.reason === "withheld").length
        if (withheldKept > 0) yield* Effect.logInfo(`${stream.name}: ${withheldKept} row(s) the service counts but does not return to this app: kept, not marked deleted`)
        const withheld = listing?.withheld ?? null
        if (withheld !== null && withheld > 0) {
          yield* Effect.logInfo(`${stream.name}: the service counts ${withheld} row(s) more than it lists: it withholds them from this app (not taken for missing rows)`)
        }
        const undecided = undecidedNote(kept, listing?.why, stream.near?.column)
        if (undecided !== null) {
          yield* Effect.logWarning(`${stream.name}: deletions not checked: ${undecided}`)
          yield* Metric.increment(Metrics.forAccount(Metrics.sweepsSkipped, accountId))
        }
        const { deleted } = yield* endPass(accountId, stream, { unchecked: undecided, withheld })
        if (deleted !== gone) yield* Effect.logDebug(`${stream.name}: ${gone} candidate(s) proven gone, ${deleted} row(s) marked deleted`)
        return {
          deleted,
          confirmed: alive + kept.length,
          overheadPoints: yield* Ref.get(spent),
          listed: listing !== undefined,
          ...(undecided === null ? {} : { unchecked: undecided })
        } satisfies PassEndResult
      }).pipe(Effect.withSpan("sync.passEnd", { attributes: { accountId: credentials.accountId, stream: stream.name } }))

    return PassEnd.of({ finish })
  })
)

import type { SqlError } from "@effect/sql"
import { Context, Effect, Layer, Stream } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import { Checkpoints } from "./Checkpoints.js"
import type { ReceivedNode, Variables } from "./model.js"
import { Pager, type PagerError } from "./Pager.js"
import type { AnyStream } from "./streams/Stream.js"
import { Warehouse } from "./Warehouse.js"

export interface PassEndResult {
  /** Rows marked deleted: gone from the service, and confirmed gone. */
  readonly deleted: number
  /** Sweep candidates found alive at the service, landed instead of marked deleted. */
  readonly confirmed: number
  /** Points spent on the checks: the count, a listing of the ids, re-reads of the candidates. */
  readonly overheadPoints: number
  /** Whether the connection was listed (the pass saw the list move, or its count did not match). */
  readonly listed: boolean
}

/** Sweep candidates re-read per round. */
const candidatesPerRound = 500

/**
 * The end of a full pass that reached the end of its connection: it marks deleted only rows that are gone.
 * - A count of the connection checks the pass: when the list moved under it (a page did not join where it would
 *   have) or the count differs from the rows it landed, rows it landed may have been deleted behind it, so the
 *   connection is listed (ids only, about a point a row) and the listing replaces what the pass saw.
 * - The candidates (live rows not seen, or not listed) are confirmed absent before they are marked: re-read by id
 *   where the connection filters by id (a candidate found alive is landed instead); elsewhere by a listing of the
 *   connection, when the pass has not just made one.
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
    }) => Effect.Effect<PassEndResult, PagerError | SqlError.SqlError | E>
  }
>() {}

export const PassEndLive = Layer.effect(
  PassEnd,
  Effect.gen(function* () {
    const pager = yield* Pager
    const checkpoints = yield* Checkpoints
    const warehouse = yield* Warehouse

    const finish: PassEnd["Type"]["finish"] = ({ credentials, stream, variables, shifted, tracksSeen }) =>
      Effect.gen(function* () {
        const { accountId } = credentials
        let overheadPoints = 0

        /** The connection's ids, as the pass's seen ids from now on. */
        const listIds = Effect.gen(function* () {
          yield* checkpoints.restartSeen(accountId, stream.name)
          yield* pager.pages({ credentials, stream, variables, select: "ids" }).pipe(
            Stream.runForEach((page) =>
              Effect.gen(function* () {
                overheadPoints += page.costPoints
                yield* checkpoints.recordSeen(accountId, stream.name, page.nodes.map((n) => n.node.id))
              })
            )
          )
        })

        const seen = yield* checkpoints.seenCount(accountId, stream)
        const { total, costPoints } = yield* pager.count(credentials, stream, variables)
        overheadPoints += costPoints
        let listed = false
        if (shifted || total !== seen) {
          yield* Effect.logInfo(
            `${stream.name}: the list changed during the full pass (${shifted ? "it moved under the pass" : `${total} rows at the service, ${seen} landed`}); listing its ids before the sweep`
          )
          yield* listIds
          listed = true
        }

        let confirmed = 0
        if (tracksSeen || listed) {
          let after = ""
          for (;;) {
            const candidates = yield* warehouse.unseen(accountId, stream, after, candidatesPerRound)
            if (candidates.length === 0) break
            after = candidates[candidates.length - 1]!
            if (stream.lookup !== undefined) {
              const alive: Array<ReceivedNode> = []
              const bodies: Array<string | undefined> = []
              let fetchedAtMs = Number.POSITIVE_INFINITY
              yield* pager.pages({ credentials, stream, variables: stream.lookup(candidates), atMost: candidates.length }).pipe(
                Stream.runForEach((page) =>
                  Effect.sync(() => {
                    overheadPoints += page.costPoints
                    fetchedAtMs = Math.min(fetchedAtMs, page.fetchedAtMs)
                    alive.push(...page.nodes)
                    bodies.push(page.body)
                  })
                )
              )
              if (alive.length > 0) {
                yield* Effect.logInfo(`${stream.name}: ${alive.length} row(s) missed by the pass are alive at the service: landed, not deleted`)
                yield* warehouse.land({ accountId, stream, nodes: alive, bodies, pass: undefined, recordSeen: true, fetchedAt: new Date(fetchedAtMs) })
                confirmed += alive.length
              }
            } else if (!listed) {
              // no way to ask for these rows alone: a listing of the connection confirms them gone (or not)
              yield* listIds
              listed = true
              after = ""
            } else {
              // listed: the candidates are not in the connection as it stands
            }
          }
        }
        const { deleted } = yield* warehouse.finishFullPass(accountId, stream)
        return { deleted, confirmed, overheadPoints, listed }
      }).pipe(Effect.withSpan("sync.passEnd", { attributes: { accountId: credentials.accountId, stream: stream.name } }))

    return PassEnd.of({ finish })
  })
)

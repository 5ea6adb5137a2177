import { type Cause, Context, Effect, Layer, Option, ParseResult, Queue, Schema, Stream } from "effect"
import type { DocumentNode } from "graphql"
import { CostBudget } from "../api/CostBudget.js"
import type { ServiceError } from "../api/errors.js"
import { type AccountCredentials, ServiceClient } from "../api/ServiceClient.js"
import { joinPage, nextOffset, RecentIds, stepBack } from "./Continuation.js"
import { ConnectionShapeInvalid, NodeSchemaMismatch } from "./errors.js"
import type { Page, ReceivedNode, Variables } from "./model.js"
import { nodeGuard } from "./nodeGuard.js"
import type { AnyStream } from "./streams/Stream.js"

const ConnectionSchema = Schema.Struct({ nodes: Schema.Array(Schema.Unknown) })
const decodeConnection = Schema.decodeUnknownEither(ConnectionSchema)
const IdNode = Schema.Struct({ id: Schema.NonEmptyString })
const CountSchema = Schema.Struct({ totalCount: Schema.Number })

const at = (data: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((v, key) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), data)

export type PagerError = ServiceError | ConnectionShapeInvalid | NodeSchemaMismatch

/** How many landed ids a pass keeps to join pages on: far more than any page, so a shift is followed, not guessed. */
const recentCapacity = 2000

export interface PagesRequest<E> {
  readonly credentials: AccountCredentials<E>
  readonly stream: AnyStream
  /** The pass's order and filter. */
  readonly variables: Variables
  /** Resuming: rows already landed by the pass, and the ids of its last page (default: from the start). */
  readonly position?: number
  readonly anchors?: ReadonlyArray<string>
  /** "ids": the listing (each node only its id, stream.idsDocument) instead of the nodes. */
  readonly select?: "nodes" | "ids"
}

/** The pages of streams' connections, sized by the accounts' cost budgets. */
export class Pager extends Context.Tag("account-sync/Pager")<
  Pager,
  {
    /**
     * The pages of one stream's connection for one account, from `position`, each asked one row before where the
     * last ended and joined on a row already landed (a page that does not join is asked again further back), always
     * passing `first` (sized by the account's CostBudget). Each node is checked against the stream's Schema (a
     * compiled guard; Schema's decoder for the error); the first node that fails ends the stream with the account,
     * stream, field and position.
     */
    readonly pages: <E>(request: PagesRequest<E>) => Stream.Stream<Page, PagerError | E>
    /** How many rows the connection holds in `variables`' filter. */
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
    const guards = new WeakMap<AnyStream, (value: unknown) => boolean>()
    const guardOf = (stream: AnyStream) => {
      let guard = guards.get(stream)
      if (guard === undefined) guards.set(stream, (guard = nodeGuard(stream.node)))
      return guard
    }

    const pages = <E>(request: PagesRequest<E>) => {
      const { credentials, stream, variables } = request
      const { accountId } = credentials
      const listing = request.select === "ids"
      const document: DocumentNode = listing ? stream.idsDocument : stream.document
      const isNode = listing ? Schema.is(IdNode) : guardOf(stream)
      const decodeNode = Schema.decodeUnknownEither(listing ? IdNode : stream.node, { errors: "first", onExcessProperty: "ignore" })
      const recent = new RecentIds(recentCapacity, request.anchors ?? [])

      /** One page as received: its nodes checked, its cost. */
      const fetch = (offset: number) =>
        Effect.gen(function* () {
          const variablesFor = (first: number) => ({ ...variables, first, offset })
          const first = yield* budget.pageSize(accountId, document, variablesFor, stream.maxPageSize)
          const result = yield* client.execute(credentials, document, variablesFor(first))
          const connection = decodeConnection(at(result.data, stream.connectionPath))
          if (connection._tag === "Left") {
            return yield* new ConnectionShapeInvalid({
              accountId,
              stream: stream.name,
              position: offset,
              detail: ParseResult.TreeFormatter.formatErrorSync(connection.left)
            })
          }
          const nodes: Array<ReceivedNode> = []
          for (const raw of connection.right.nodes) {
            if (isNode(raw)) {
              nodes.push({ node: raw as ReceivedNode["node"], raw })
              continue
            }
            const decoded = decodeNode(raw)
            if (decoded._tag === "Left") {
              const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
              const id = raw !== null && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined
              return yield* new NodeSchemaMismatch({
                accountId,
                stream: stream.name,
                field: issue?.path.map(String).join(".") || "(node)",
                position: offset,
                nodeId: typeof id === "string" ? id : undefined,
                detail: issue?.message ?? "does not match the schema"
              })
            }
            nodes.push({ node: decoded.right as ReceivedNode["node"], raw })
          }
          return { offset, first, nodes, body: result.body, costPoints: result.cost?.actualQueryCost ?? 0 }
        })

      /** The page that continues from `position`: asked again further back until it joins the rows landed. */
      const joined = (position: number) =>
        Effect.gen(function* () {
          let offset = nextOffset(position)
          let wasted = 0
          for (let attempt = 0; ; attempt++) {
            const page = yield* fetch(offset)
            const join = joinPage(page.nodes.map((n) => n.node.id), recent, offset)
            if (join._tag === "Lost") {
              wasted += page.costPoints
              yield* Effect.logInfo(`page at ${offset} does not join the rows landed (the list moved behind the pass); asking further back`)
              offset = stepBack(offset, page.first, attempt)
              continue
            }
            recent.add(page.nodes.map((n) => n.node.id))
            const reread = page.nodes.length > 0 ? (page.costPoints * (join.at + 1)) / page.nodes.length : 0
            return {
              ...page,
              newFrom: join.at + 1,
              position: page.offset + page.nodes.length,
              mayHaveMore: page.nodes.length >= page.first,
              shifted: join.shifted || attempt > 0,
              overheadPoints: wasted + reread
            } satisfies Page
          }
        })

      return Stream.paginateEffect(request.position ?? 0, (position) =>
        Effect.map(joined(position), (page) => [page, page.mayHaveMore ? Option.some(page.position) : Option.none()] as const)
      )
    }

    const count = <E>(credentials: AccountCredentials<E>, stream: AnyStream, variables: Variables) =>
      Effect.gen(function* () {
        const filter = (variables as { readonly filter?: unknown }).filter
        const result = yield* client.execute(credentials, stream.countDocument, filter === undefined ? {} : { filter })
        const decoded = Schema.decodeUnknownEither(CountSchema)(at(result.data, stream.connectionPath))
        if (decoded._tag === "Left") {
          return yield* new ConnectionShapeInvalid({
            accountId: credentials.accountId,
            stream: stream.name,
            position: null,
            detail: `totalCount: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
          })
        }
        return { total: decoded.right.totalCount, costPoints: result.cost?.actualQueryCost ?? 0 }
      })

    return Pager.of({ pages, count })
  })
)

/** Pages fetched ahead of the one landing, at most: a bound on memory (a page of 100 jobs is ~100 KB of JSON). */
export const prefetchPages = 4

/**
 * Consecutive pages in batches, each to be landed by one statement. With `prefetch`, a fiber fetches ahead into a
 * queue of `prefetchPages` while the previous batch lands, and a batch is every page waiting there (at least one):
 * HTTP and Postgres overlap instead of taking turns, and when landing is the slower side, the pages that queued up
 * meanwhile share one statement and one commit. Without `prefetch`, one page per batch and nothing runs ahead.
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
      const nextBatch: Effect.Effect<ReadonlyArray<Page>, Option.Option<E>> = Effect.suspend(() => {
        if (ending !== undefined) return Effect.failCause(ending)
        return Effect.flatMap(Queue.takeBetween(queue, 1, prefetchPages), (exits) => {
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

import { type Cause, Context, Effect, Layer, Option, ParseResult, Queue, Schema, Stream } from "effect"
import { CostBudget } from "../api/CostBudget.js"
import type { ServiceError } from "../api/errors.js"
import { type AccountCredentials, ServiceClient } from "../api/ServiceClient.js"
import { ConnectionShapeInvalid, NodeSchemaMismatch } from "./errors.js"
import type { Page, ReceivedNode, Variables } from "./model.js"
import { nodeGuard } from "./nodeGuard.js"
import type { AnyStream } from "./streams/Stream.js"

const ConnectionSchema = Schema.Struct({
  nodes: Schema.Array(Schema.Unknown),
  pageInfo: Schema.Struct({ hasNextPage: Schema.Boolean, endCursor: Schema.NullOr(Schema.String) })
})
const decodeConnection = Schema.decodeUnknownEither(ConnectionSchema)

const at = (data: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((v, key) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), data)

export type PagerError = ServiceError | ConnectionShapeInvalid | NodeSchemaMismatch

export interface PagesRequest<E> {
  readonly credentials: AccountCredentials<E>
  readonly stream: AnyStream
  readonly variables: Variables
  readonly after: string | null
}

/** The pages of streams' connections, sized by the accounts' cost budgets. */
export class Pager extends Context.Tag("account-sync/Pager")<
  Pager,
  {
    /**
     * The pages of one stream's connection for one account, from `after`, always passing `first` (sized by the
     * account's CostBudget). Each node is checked against the stream's Schema (a compiled guard; Schema's decoder for
     * the error); the first node that fails ends the stream with the account, stream, field and cursor.
     */
    readonly pages: <E>(request: PagesRequest<E>) => Stream.Stream<Page, PagerError | E>
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

    const pages = <E>({ credentials, stream, variables, after: start }: PagesRequest<E>) => {
      const { accountId } = credentials
      const isNode = guardOf(stream)
      const decodeNode = Schema.decodeUnknownEither(stream.node, { errors: "first", onExcessProperty: "ignore" })

      const fetch = (after: string | null) =>
        Effect.gen(function* () {
          const variablesFor = (first: number) => ({ ...variables, first, after })
          const first = yield* budget.pageSize(accountId, stream.document, variablesFor, stream.maxPageSize)
          const result = yield* client.execute(credentials, stream.document, variablesFor(first))
          const connection = decodeConnection(at(result.data, stream.connectionPath))
          if (connection._tag === "Left") {
            return yield* new ConnectionShapeInvalid({
              accountId,
              stream: stream.name,
              cursor: after,
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
                cursor: after,
                nodeId: typeof id === "string" ? id : undefined,
                detail: issue?.message ?? "does not match the schema"
              })
            }
            nodes.push({ node: decoded.right as ReceivedNode["node"], raw })
          }
          const { hasNextPage, endCursor } = connection.right.pageInfo
          if (hasNextPage && endCursor === null) {
            return yield* new ConnectionShapeInvalid({ accountId, stream: stream.name, cursor: after, detail: "hasNextPage without an endCursor" })
          }
          return { after, first, nodes, endCursor, hasNextPage, body: result.body } satisfies Page
        })

      return Stream.paginateEffect(start, (after) =>
        Effect.map(fetch(after), (page) => [page, page.hasNextPage ? Option.some(page.endCursor) : Option.none()] as const)
      )
    }

    return Pager.of({ pages })
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

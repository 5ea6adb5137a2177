import { type Cause, Clock, Context, Effect, Layer, Option, ParseResult, Queue, Schema, Stream } from "effect"
import type { DocumentNode } from "graphql"
import { CostBudget } from "../api/CostBudget.js"
import type { ServiceError } from "../api/errors.js"
import { type AccountCredentials, ServiceClient } from "../api/ServiceClient.js"
import { joinPage, nextOffset, RecentIds, stepBack } from "./Continuation.js"
import { ConnectionShapeInvalid, NodeSchemaMismatch } from "./errors.js"
import { mergeVariables, type Page, type ReceivedNode, type Variables } from "./model.js"
import { nodeGuard } from "./nodeGuard.js"
import { type AnyStream, type ChildDefinition, CustomFieldNode } from "./streams/Stream.js"

const ConnectionSchema = Schema.Struct({ nodes: Schema.Array(Schema.Unknown) })
const decodeConnection = Schema.decodeUnknownEither(ConnectionSchema)
const IdNode = Schema.Struct({ id: Schema.NonEmptyString })
const CountSchema = Schema.Struct({ totalCount: Schema.Number })
const isCustomField = Schema.is(CustomFieldNode)

const at = (data: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((v, key) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), data)

export type PagerError = ServiceError | ConnectionShapeInvalid | NodeSchemaMismatch

/** How many landed ids a pass keeps to join pages on: far more than any page, so a shift is followed, not guessed. */
const recentCapacity = 2000

/** The fewest parents a page should carry: below it, children are asked fewer per parent (and followed up). */
const minParentsPerPage = 10

export interface PagesRequest<E> {
  readonly credentials: AccountCredentials<E>
  readonly stream: AnyStream
  /** The pass's order and filter. */
  readonly variables: Variables
  /** Resuming: the partition and the rows of it already landed by the pass, and the ids of its last page. */
  readonly partition?: number
  readonly position?: number
  readonly anchors?: ReadonlyArray<string>
  /** "ids": the listing (each node only its id, stream.idsDocument) instead of the nodes. */
  readonly select?: "nodes" | "ids"
  /** The most rows a partition of this list can hold (a lookup of n ids: n): pages no larger, none past it. */
  readonly atMost?: number
}

/** The pages of streams' connections, sized by the accounts' cost budgets. */
export class Pager extends Context.Tag("account-sync/Pager")<
  Pager,
  {
    /**
     * The pages of one stream's connection for one account (each partition in turn), from `position`, each asked
     * one row before where the last ended and joined on a row already landed (a page that does not join is asked
     * again further back), always passing `first` (sized by the account's CostBudget, with each child connection's
     * inner page). A parent with more children than the inner page gets the rest in follow-up queries before its page
     * is given out: no child is cut off. Each node (and child) is checked against its Schema (a compiled guard;
     * Schema's decoder for the error); the first that fails ends the stream with the account, stream, field and
     * position.
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
}

export const PagerLive = Layer.effect(
  Pager,
  Effect.gen(function* () {
    const client = yield* ServiceClient
    const budget = yield* CostBudget
    const guards = new WeakMap<object, (value: unknown) => boolean>()
    const guardOf = (key: object, schema: Schema.Schema<any, any>) => {
      let guard = guards.get(key)
      if (guard === undefined) guards.set(key, (guard = nodeGuard(schema)))
      return guard
    }

    const pages = <E>(request: PagesRequest<E>) => {
      const { credentials, stream } = request
      const { accountId } = credentials
      const listing = request.select === "ids"
      const document: DocumentNode = listing ? stream.idsDocument : stream.document
      const children = listing ? [] : stream.children
      const isNode = listing ? Schema.is(IdNode) : guardOf(stream, stream.node)
      // a decoded node is the node Schema's fields only: its line items and custom fields travel on from the raw node
      const nested = [...children.map((c) => c.field), ...(stream.customFields !== undefined && !listing ? ["customFields"] : [])]
      const withNested = (decoded: object, raw: unknown): object => {
        if (nested.length === 0) return decoded
        const out: Record<string, unknown> = { ...decoded }
        for (const field of nested) if (field in (raw as Record<string, unknown>)) out[field] = (raw as Record<string, unknown>)[field]
        return out
      }
      const decodeNode = Schema.decodeUnknownEither(listing ? IdNode : stream.node, { errors: "first", onExcessProperty: "ignore" })
      const partitions = stream.partitions
      const largestPage = request.atMost === undefined ? stream.maxPageSize : Math.max(1, Math.min(stream.maxPageSize, request.atMost))
      const listEnds = (position: number) => request.atMost !== undefined && position >= request.atMost
      const variablesOf = (partition: number): Variables => mergeVariables(request.variables, partitions[partition]!)

      const mismatch = (position: number, issue: ParseResult.ParseError, raw: unknown, prefix: string) => {
        const first = ParseResult.ArrayFormatter.formatErrorSync(issue)[0]
        const id = raw !== null && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined
        return new NodeSchemaMismatch({
          accountId,
          stream: stream.name,
          field: `${prefix}${first?.path.map(String).join(".") || "(node)"}`,
          position,
          nodeId: typeof id === "string" ? id : undefined,
          detail: first?.message ?? "does not match the schema"
        })
      }

      /** The child nodes at `raw[child.field].nodes`, each checked against the child's Schema. */
      const childNodes = (raw: unknown, child: ChildDefinition, position: number) =>
        Effect.gen(function* () {
          const connection = decodeConnection((raw as Record<string, unknown>)[child.field])
          if (connection._tag === "Left") {
            return yield* new ConnectionShapeInvalid({ accountId, stream: stream.name, position, detail: `${child.field}: ${ParseResult.TreeFormatter.formatErrorSync(connection.left)}` })
          }
          const isChild = guardOf(child, child.node)
          for (const node of connection.right.nodes) {
            if (isChild(node)) continue
            const decoded = Schema.decodeUnknownEither(child.node, { errors: "first", onExcessProperty: "ignore" })(node)
            if (decoded._tag === "Left") return yield* mismatch(position, decoded.left, node, `${child.field}.`)
          }
          return connection.right.nodes
        })

      /** The page size and each child's inner page: as many parents as a full bucket holds, children halved if too few. */
      const sizeOf = (variablesFor: (first: number, inner: ReadonlyMap<ChildDefinition, number>) => Variables) =>
        Effect.gen(function* () {
          const inner = new Map(children.map((c) => [c, c.innerPage] as const))
          for (;;) {
            const first = yield* budget.pageSize(accountId, document, (n) => variablesFor(n, inner), largestPage)
            const shrinkable = [...inner].filter(([, k]) => k > 1)
            if (first >= Math.min(minParentsPerPage, stream.maxPageSize) || shrinkable.length === 0) return { first, inner }
            for (const [child, k] of shrinkable) inner.set(child, Math.max(1, Math.floor(k / 2)))
          }
        })

      /** The rest of one parent's children: the parent asked again alone, its children from `got` on. */
      const followUp = (partition: number, offset: number, parentId: string, child: ChildDefinition, got: number) =>
        Effect.gen(function* () {
          const more: Array<unknown> = []
          let costPoints = 0
          for (let childOffset = got; ; ) {
            const variablesFor = (childFirst: number) => ({ ...variablesOf(partition), first: 1, offset, childFirst, childOffset })
            const childFirst = yield* budget.pageSize(accountId, child.followUpDocument, variablesFor, stream.maxPageSize)
            const result = yield* client.execute(credentials, child.followUpDocument, variablesFor(childFirst))
            costPoints += result.cost?.actualQueryCost ?? 0
            const connection = decodeConnection(at(result.data, stream.connectionPath))
            const parent = connection._tag === "Right" ? connection.right.nodes[0] : undefined
            if (parent === undefined || (parent as { id?: unknown }).id !== parentId) return yield* Effect.fail(new ParentMoved())
            const nodes = yield* childNodes(parent, child, offset)
            more.push(...nodes)
            childOffset += nodes.length
            if (nodes.length < childFirst) return { more, costPoints }
          }
        })

      /** One page as received: its nodes (and their children, followed up in full) checked, its cost. */
      const fetch = (partition: number, offset: number) =>
        Effect.gen(function* () {
          const variablesFor = (first: number, inner: ReadonlyMap<ChildDefinition, number>) => {
            const v: Record<string, unknown> = { ...variablesOf(partition), first, offset }
            for (const [child, k] of inner) v[child.firstVariable] = k
            return v
          }
          const { first, inner } = yield* sizeOf(variablesFor)
          const fetchedAtMs = yield* Clock.currentTimeMillis
          const result = yield* client.execute(credentials, document, variablesFor(first, inner))
          let costPoints = result.cost?.actualQueryCost ?? 0
          const connection = decodeConnection(at(result.data, stream.connectionPath))
          if (connection._tag === "Left") {
            return yield* new ConnectionShapeInvalid({ accountId, stream: stream.name, position: offset, detail: ParseResult.TreeFormatter.formatErrorSync(connection.left) })
          }
          const nodes: Array<ReceivedNode> = []
          let complete = true
          for (const [i, raw] of connection.right.nodes.entries()) {
            let node: ReceivedNode["node"]
            if (isNode(raw)) node = raw as ReceivedNode["node"]
            else {
              const decoded = decodeNode(raw)
              if (decoded._tag === "Left") return yield* mismatch(offset, decoded.left, raw, "")
              node = withNested(decoded.right, raw) as ReceivedNode["node"]
            }
            let merged: Record<string, unknown> | undefined
            for (const child of children) {
              const got = yield* childNodes(raw, child, offset)
              if (got.length < inner.get(child)!) continue
              const rest = yield* followUp(partition, offset + i, node.id, child, got.length)
              costPoints += rest.costPoints
              if (rest.more.length === 0) continue
              merged ??= { ...(raw as Record<string, unknown>) }
              merged[child.field] = { nodes: [...got, ...rest.more] }
            }
            if (stream.customFields !== undefined && !listing) {
              const fields = (raw as { customFields?: unknown }).customFields
              if (!Array.isArray(fields) || !fields.every(isCustomField)) {
                return yield* new NodeSchemaMismatch({ accountId, stream: stream.name, field: "customFields", position: offset, nodeId: node.id, detail: "expected a list of custom fields, each with __typename and label" })
              }
            }
            if (merged !== undefined) {
              complete = false
              nodes.push({ node: { ...node, ...merged } as ReceivedNode["node"], raw: merged })
            } else nodes.push({ node, raw })
          }
          // a node completed by follow-ups is not the body as received: the page lands from its nodes
          return { partition, offset, first, nodes, body: complete ? result.body : undefined, costPoints, fetchedAtMs }
        })

      /** The page that continues from `position`: asked again further back until it joins the rows landed. */
      const joined = (partition: number, position: number, recent: RecentIds) =>
        Effect.gen(function* () {
          let offset = nextOffset(position)
          let wasted = 0
          for (let attempt = 0; ; attempt++) {
            const fetched = yield* fetch(partition, offset).pipe(Effect.either)
            if (fetched._tag === "Left") {
              if (!(fetched.left instanceof ParentMoved)) return yield* Effect.fail(fetched.left)
              yield* Effect.logInfo(`the list moved while children of page ${offset} were followed up; asking the page again further back`)
              offset = stepBack(offset, 1, attempt)
              continue
            }
            const page = fetched.right
            const join = joinPage(page.nodes.map((n) => n.node.id), recent, offset)
            if (join._tag === "Lost") {
              wasted += page.costPoints
              yield* Effect.logInfo(`page at ${offset} does not join the rows landed (the list moved behind the pass); asking further back`)
              offset = stepBack(offset, page.first, attempt)
              continue
            }
            recent.add(page.nodes.map((n) => n.node.id))
            const reread = page.nodes.length > 0 ? (page.costPoints * (join.at + 1)) / page.nodes.length : 0
            const short = page.nodes.length < page.first || listEnds(page.offset + page.nodes.length)
            return {
              ...page,
              newFrom: join.at + 1,
              position: page.offset + page.nodes.length,
              mayHaveMore: !short || partition + 1 < partitions.length,
              shifted: join.shifted || attempt > 0,
              overheadPoints: wasted + reread
            } satisfies Page
          }
        })

      const start = request.partition ?? 0
      let recent = new RecentIds(recentCapacity, request.anchors ?? [])
      return Stream.paginateEffect({ partition: start, position: request.position ?? 0 }, ({ partition, position }) =>
        Effect.map(joined(partition, position, recent), (page) => {
          if (page.nodes.length >= page.first && !listEnds(page.position)) return [page, Option.some({ partition, position: page.position })] as const
          if (partition + 1 >= partitions.length) return [page, Option.none()] as const
          recent = new RecentIds(recentCapacity)
          return [page, Option.some({ partition: partition + 1, position: 0 })] as const
        })
      )
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

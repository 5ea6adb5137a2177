import { Clock, Effect } from "effect"
import type { DocumentNode } from "graphql"
import type { CostBudget } from "../../api/CostBudget.js"
import type { AccountCredentials, ServiceClient } from "../../api/ServiceClient.js"
import type { Answer } from "./answer.js"
import { barrenPagesLimit } from "./Continuation.js"
import type { Place } from "./place.js"
import { NodeSchemaMismatch, PagingStuck } from "../errors.js"
import type { ReceivedNode, Variables } from "../model.js"
import { landsFromBody } from "../landing/pageParams.js"
import { at, pageChecks } from "./pageNodes.js"
import type { AnyStream, ChildDefinition, Paging } from "../streams/Stream.js"
import { pageVariables, placeVariables } from "./pageVariables.js"

/** The list moved while a parent's children were followed up: its page is asked again. */
export class ParentMoved {
  readonly _tag = "ParentMoved"
  /** Points spent on the page and its follow-ups so far. */
  constructor(readonly costPoints: number) {}
}

/** One ask of a page: its nodes checked (their children followed up in full), what the walk needs, its cost. */
export interface Fetched extends Answer {
  readonly nodes: ReadonlyArray<ReceivedNode>
  readonly body: Uint8Array | undefined
  readonly costPoints: number
  readonly fetchedAtMs: number
}

/** One list of one pass: what every ask of its pages shares. */
export interface PagedList<E> {
  readonly client: ServiceClient["Type"]
  readonly budget: CostBudget["Type"]
  readonly credentials: AccountCredentials<E>
  readonly stream: AnyStream
  /** The listing (ids only): no children. */
  readonly listing: boolean
  /** The pass's variables merged with a partition's. */
  readonly variablesOf: (partition: number) => Variables
  /** Each page's fetch runs through it (see PageGate). */
  readonly gated: <A, E2, R>(fetch: Effect.Effect<A, E2, R>) => Effect.Effect<A, E2, R>
}

export const documentOf = (stream: AnyStream, listing: boolean, paging: Paging): DocumentNode =>
  listing ? stream.documents[paging].ids : stream.documents[paging].page

/** The page a parent was found on: where it was asked, its size, how many nodes it held, their cursors. */
interface ParentPage {
  readonly place: Place
  readonly first: number
  readonly held: number
  readonly cursors: ReadonlyArray<string> | undefined
}

/**
 * What a pass reads of a node that lands from its page's body: its id and updatedAt (the checkpoint's anchors and
 * mark, the records an incremental pass finds changed). A page waiting to land then holds its body's bytes, not the
 * parsed answer (about four times their size on the heap).
 */
const idAndUpdatedAt = (stream: AnyStream, n: ReceivedNode): ReceivedNode => {
  const kept = stream.updatedAt === undefined ? { id: n.node.id } : { id: n.node.id, updatedAt: stream.updatedAt(n.node) }
  return { node: kept, raw: kept }
}

/** A list with its checks: what one ask of a page uses. */
interface Fetching<E> {
  readonly list: PagedList<E>
  readonly checks: ReturnType<typeof pageChecks>
  readonly children: ReadonlyArray<ChildDefinition>
}

/**
 * The rest of one parent's children. The parent is the `index`-th node of a page of `first` positions that held
 * `held` nodes: it is among the `first - held + 1` positions from its index (rows before it may have been left
 * out), so those are asked again and it is found by id; its children from `from` (the positions the page paged).
 */
const followUp = <E>(f: Fetching<E>, partition: number, page: ParentPage, index: number, parentId: string, child: ChildDefinition, from: number) => {
  const { list, checks } = f
  const { client, budget, credentials, stream } = list
  const { accountId } = credentials
  const window = page.first - page.held + 1
  const parentAt: Place =
    page.place._tag === "Offset"
      ? { _tag: "Offset", offset: page.place.offset + index }
      : { _tag: "After", after: index === 0 ? page.place.after : (page.cursors?.[index - 1] ?? null) }
  const document = child.followUp[page.place._tag === "Offset" ? "offset" : "after"]
  return Effect.gen(function* () {
    const more: Array<unknown> = []
    let costPoints = 0
    let barren = 0
    for (let childOffset = from; ; ) {
      const variablesFor = (childFirst: number) => ({ ...list.variablesOf(partition), first: window, ...placeVariables(parentAt), childFirst, childOffset })
      // sized to the points the bucket holds now: the query's requested cost counts every position of the window while
      // it reads one parent's children, and waiting for a full bucket's points it will not spend leaves them unspent
      const childFirst = yield* budget.pageSize(accountId, document, variablesFor, stream.maxPageSize, "now")
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
}

/** One ask of a page at `place`: its nodes checked, their children followed up in full, its cost. */
const fetchPage = <E>(f: Fetching<E>, partition: number, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>, position: number) => {
  const { list, checks, children } = f
  const { client, credentials, stream, budget } = list
  const document = documentOf(stream, list.listing, place._tag === "Offset" ? "offset" : "after")
  const variables = pageVariables(list.variablesOf(partition), place, first, inner)
  // the wait for points outside the gate: a page that holds the gate while it waits for them keeps the account's
  // change events (PageGate.alone) waiting as long
  const room = Effect.flatMap(budget.estimate(credentials.accountId, document, variables), (cost) => budget.room(credentials.accountId, cost))
  const gated = list.gated(
    Effect.gen(function* () {
      const fetchedAtMs = yield* Clock.currentTimeMillis
      const result = yield* client.execute(credentials, document, variables)
      const connection = yield* checks.connection(at(result.data, stream.connectionPath), position)
      const page: ParentPage = { place, first, held: connection.nodes.length, cursors: connection.cursors }
      const nodes: Array<ReceivedNode> = []
      // a plain loop, not an effect per node: this runs for every node of every page
      let costPoints = result.cost?.actualQueryCost ?? 0
      let complete = true
      for (const [i, raw] of connection.nodes.entries()) {
        const node = checks.node(raw, position)
        if (node instanceof NodeSchemaMismatch) return yield* node
        let merged: Record<string, unknown> | undefined
        for (const child of children) {
          const got = yield* checks.children(raw, child, position)
          if (!got.hasNextPage) continue
          const rest = yield* followUp(f, partition, page, i, node.id, child, inner.get(child)!).pipe(
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
    })
  )
  return Effect.zipRight(room, gated)
}

/** Asks pages of `list`: `fetch(partition, place, first, inner, position)` is one ask (see Fetched). */
export const pageFetcher = <E>(list: PagedList<E>) => {
  const f: Fetching<E> = { list, checks: pageChecks(list.credentials.accountId, list.stream, list.listing), children: list.listing ? [] : list.stream.children }
  return (partition: number, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>, position: number) => fetchPage(f, partition, place, first, inner, position)
}

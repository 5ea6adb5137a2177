import { Effect, ParseResult, Schema } from "effect"
import { ConnectionShapeInvalid, NodeSchemaMismatch } from "../errors.js"
import type { ReceivedNode } from "../model.js"
import { nodeGuard } from "./nodeGuard.js"
import { type AnyStream, type ChildDefinition, CustomFieldNode } from "../streams/Stream.js"

/**
 * What a page's answer must hold, checked before anything of it lands: the connection with its `pageInfo` (a page
 * without one says nothing about whether the list goes on, and is refused), each node against the stream's Schema (a
 * compiled guard; Schema's decoder for the error), each child connection with its `pageInfo`, the custom fields.
 * The first that fails names the account, stream, field and position.
 */

const PageInfo = Schema.Struct({ hasNextPage: Schema.Boolean, endCursor: Schema.optional(Schema.NullOr(Schema.String)) })
const Connection = Schema.Struct({
  nodes: Schema.Array(Schema.Unknown),
  pageInfo: PageInfo,
  totalCount: Schema.optional(Schema.NonNegativeInt),
  edges: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ cursor: Schema.String }))))
})
const decodeConnection = Schema.decodeUnknownEither(Connection)
const IdNode = Schema.Struct({ id: Schema.NonEmptyString })
const isCustomField = Schema.is(CustomFieldNode)

/** A connection as the service answered it: its nodes (unchecked), whether more follow, each node's cursor when asked. */
export interface ConnectionPage {
  readonly nodes: ReadonlyArray<unknown>
  readonly hasNextPage: boolean
  readonly endCursor: string | null | undefined
  readonly cursors: ReadonlyArray<string> | undefined
  /** How many the service counts, when asked (a child connection always is). */
  readonly totalCount: number | undefined
}

export const at = (data: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((v, key) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), data)

const guards = new WeakMap<object, (value: unknown) => boolean>()
const guardOf = (key: object, schema: Schema.Schema<any, any>) => {
  let guard = guards.get(key)
  if (guard === undefined) guards.set(key, (guard = nodeGuard(schema)))
  return guard
}

/** The checks of one stream's pages for one account: of its nodes, or (`listing`) of its ids only. */
export const pageChecks = (accountId: string, stream: AnyStream, listing: boolean) => {
  const isNode = listing ? Schema.is(IdNode) : guardOf(stream, stream.node)
  const decodeNode = Schema.decodeUnknownEither(listing ? IdNode : stream.node, { errors: "first", onExcessProperty: "ignore" })
  // a decoded node is the node Schema's fields only: its line items and custom fields travel on from the raw node
  const nested = listing ? [] : [...stream.children.map((c) => c.field), ...(stream.customFields !== undefined ? ["customFields"] : [])]
  const withNested = (decoded: object, raw: unknown): object => {
    if (nested.length === 0) return decoded
    const out: Record<string, unknown> = { ...decoded }
    for (const field of nested) if (field in (raw as Record<string, unknown>)) out[field] = (raw as Record<string, unknown>)[field]
    return out
  }

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

  /** The connection at `value` (the stream's, or a child's under `prefix`): nodes, pageInfo, cursors. */
  const connection = (value: unknown, position: number, prefix = "") => {
    const decoded = decodeConnection(value)
    if (decoded._tag === "Left") {
      // one line: where in the connection, and what is wrong (`pageInfo: is missing`)
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
      const where = issue?.path.map(String).join(".") || "(connection)"
      return Effect.fail(new ConnectionShapeInvalid({ accountId, stream: stream.name, position, detail: `${prefix}${where}: ${issue?.message ?? "not a connection"}` }))
    }
    const { nodes, pageInfo, edges, totalCount } = decoded.right
    if (edges != null && edges.length !== nodes.length) {
      return Effect.fail(new ConnectionShapeInvalid({ accountId, stream: stream.name, position, detail: `${prefix}${edges.length} edges for ${nodes.length} nodes` }))
    }
    return Effect.succeed<ConnectionPage>({ nodes, hasNextPage: pageInfo.hasNextPage, endCursor: pageInfo.endCursor, cursors: edges?.map((e) => e.cursor) ?? undefined, totalCount })
  }

  /**
   * One node checked against the stream's Schema (decoded when the guard refuses it, for the error or the value). A
   * plain function, not an effect: a page's hundred nodes are checked in a loop that yields only on a mismatch.
   */
  const node = (raw: unknown, position: number): ReceivedNode["node"] | NodeSchemaMismatch => {
    if (isNode(raw)) return raw as ReceivedNode["node"]
    const decoded = decodeNode(raw)
    if (decoded._tag === "Left") return mismatch(position, decoded.left, raw, "")
    return withNested(decoded.right, raw) as ReceivedNode["node"]
  }

  /**
   * The child connection at `raw[child.field]` with its count (what proves a line item the parent no longer returns
   * gone), each node checked against the child's Schema.
   */
  const children = (raw: unknown, child: ChildDefinition, position: number) =>
    Effect.gen(function* () {
      const page = yield* connection((raw as Record<string, unknown>)[child.field], position, `${child.field}: `)
      if (page.totalCount === undefined) {
        return yield* new ConnectionShapeInvalid({ accountId, stream: stream.name, position, detail: `${child.field}: totalCount: is missing` })
      }
      const isChild = guardOf(child, child.node)
      for (const node of page.nodes) {
        if (isChild(node)) continue
        const decoded = Schema.decodeUnknownEither(child.node, { errors: "first", onExcessProperty: "ignore" })(node)
        if (decoded._tag === "Left") return yield* mismatch(position, decoded.left, node, `${child.field}.`)
      }
      return page
    })

  /** The node's custom fields: a list, each with its kind and label (undefined: they are, or the stream has none). */
  const customFields = (raw: unknown, nodeId: string, position: number): NodeSchemaMismatch | undefined => {
    if (stream.customFields === undefined || listing) return undefined
    const fields = (raw as { customFields?: unknown }).customFields
    if (Array.isArray(fields) && fields.every(isCustomField)) return undefined
    return new NodeSchemaMismatch({ accountId, stream: stream.name, field: "customFields", position, nodeId, detail: "expected a list of custom fields, each with __typename and label" })
  }

  return { connection, node, children, customFields }
}

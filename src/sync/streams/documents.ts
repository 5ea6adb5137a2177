import { type DocumentNode, parse } from "graphql"
import { serviceSchema } from "../../api/serviceSchema.js"
import { graphqlField } from "./columns.js"

/** The GraphQL documents a stream sends: its page, its ids, its count, a parent's further line items. */

export const pascal = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())

/** Arguments a stream never passes: pagination is the pager's, search is not a list. */
const notPassed = new Set(["first", "last", "after", "before", "offset", "searchTerm", "searchFields"])

/** The root field's own arguments a stream's queries pass through as variables (its order, filter, ...). */
const passedArguments = (connection: string) =>
  graphqlField(serviceSchema().getQueryType(), connection, `(root) ${connection}`)
    .args.filter((a) => !notPassed.has(a.name))
    .map((a) => ({ name: a.name, type: String(a.type) }))

/**
 * How a query asks for its page: `first` rows from position `$offset`, or `first` rows after the row of cursor `$after`
 * (a stream falls back to cursors when the service ignores `offset`: then each node's cursor comes too, to ask from
 * any landed row again). Either way the page carries `pageInfo { hasNextPage }`: the end of a list is what the service
 * says, never a page shorter than `first` (a service that authorizes each node leaves some out after paging).
 */
export type Paging = "offset" | "after"

/** The connection's pagination arguments and what a page brings besides its nodes, for each way of paging. */
const pagingOf: Record<Paging, { readonly variable: string; readonly argument: string; readonly extra: string }> = {
  offset: { variable: "$offset: Int!", argument: "offset: $offset", extra: "pageInfo { hasNextPage }" },
  after: { variable: "$after: String", argument: "after: $after", extra: "edges { cursor } pageInfo { hasNextPage endCursor }" }
}

/**
 * A query over the stream's connection: `first` rows from where `paging` says, with the connection's own arguments,
 * selecting `selection` of each node and the page's `pageInfo` (costed once per row slot, like the nodes' fields).
 * Positions, not cursors, by default: a pass checks that each page joins the rows it already has, whatever the
 * service's cursors are.
 */
export const connectionQuery = (
  operation: string,
  connection: string,
  selection: string,
  paging: Paging,
  extraVariables: ReadonlyArray<string> = []
): DocumentNode => {
  const passed = passedArguments(connection)
  const { variable, argument, extra } = pagingOf[paging]
  const declared = ["$first: Int!", variable, ...passed.map((a) => `$${a.name}: ${a.type}`), ...extraVariables].join(", ")
  const args = ["first: $first", argument, ...passed.map((a) => `${a.name}: $${a.name}`)].join(", ")
  return parse(`query ${operation}(${declared}) { ${connection}(${args}) { nodes { ${selection} } ${extra} } }`)
}

/** The documents a pass pages with, for one way of paging. */
export interface PagingDocuments {
  /** The page query: `$first`, `$offset` or `$after`, the connection's own arguments, each child's inner page. */
  readonly page: DocumentNode
  /** The same pages with nothing but each node's id (a listing to check a pass against). */
  readonly ids: DocumentNode
}

/**
 * A child connection inside a node: `first` children, whether more follow, and how many the service counts (a service
 * that withholds some of a parent's line items counts them: a stored line item the parent did not return is proven
 * gone only when the count is no more than the returned ones). `totalCount` costs one point per child slot.
 */
export const childSelection = (field: string, first: string, selection: string, offset?: string) =>
  `${field}(first: ${first}${offset === undefined ? "" : `, offset: ${offset}`}) { nodes { ${selection} } pageInfo { hasNextPage } totalCount }`

/** How many rows the connection holds (`first: 1`: the cheapest page that carries the count). */
export const countQuery = (operation: string, connection: string): DocumentNode => {
  const passed = passedArguments(connection).filter((a) => a.name !== "sort")
  const declared = passed.map((a) => `$${a.name}: ${a.type}`).join(", ")
  const args = ["first: 1", ...passed.map((a) => `${a.name}: $${a.name}`)].join(", ")
  return parse(`query ${operation}${declared ? `(${declared})` : ""} { ${connection}(${args}) { totalCount } }`)
}

/**
 * The rest of one parent's children: the parents from `$offset` (or after `$after`) of the pass's order, `$first` of
 * them (the parent is found among them by id), their `field` from `$childOffset`, with the child connection's pageInfo.
 */
export const followUpQuery = (operation: string, connection: string, field: string, selection: string, paging: Paging): DocumentNode =>
  connectionQuery(operation, connection, `id ${childSelection(field, "$childFirst", selection, "$childOffset")}`, paging, [
    "$childFirst: Int!",
    "$childOffset: Int!"
  ])

/** Every kind of custom field with its value (`options` of a select is left out: its value is what was chosen). */
export const customFieldsSelection =
  "customFields { __typename " +
  "... on CustomFieldArea { id label unit valueArea { length width } } " +
  "... on CustomFieldBoolean { id label valueBoolean } " +
  "... on CustomFieldLink { id label valueText valueUrl } " +
  "... on CustomFieldNumber { id label unit valueNumber } " +
  "... on CustomFieldSelect { id label valueSelect } " +
  "... on CustomFieldText { id label valueText } }"


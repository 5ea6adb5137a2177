import { Effect } from "effect"
import type { DocumentNode } from "graphql"
import type { CostBudget } from "../../api/CostBudget.js"
import type { Variables } from "../model.js"
import { smallerInner } from "./pageSizing.js"
import type { ChildDefinition } from "../streams/Stream.js"

export { minParentsPerPage } from "./pageSizing.js"

export interface PageSize {
  /** Rows of the page. */
  readonly first: number
  /** Children asked per row, each child connection (the rest comes in follow-up queries). */
  readonly inner: ReadonlyMap<ChildDefinition, number>
}

/**
 * The size of a page of `document` by the account's cost budget: as many rows as a full bucket holds, up to
 * `largest`; when that is fewer than `minParentsPerPage`, each child's inner page is halved (down to 1) until it is not
 * (smallerInner).
 */
export const pageSize = (
  budget: CostBudget["Type"],
  accountId: string,
  document: DocumentNode,
  children: ReadonlyArray<ChildDefinition>,
  largest: number,
  variablesFor: (first: number, inner: ReadonlyMap<ChildDefinition, number>) => Variables
): Effect.Effect<PageSize> => {
  const sized = (inner: ReadonlyMap<ChildDefinition, number>): Effect.Effect<PageSize> =>
    Effect.flatMap(budget.pageSize(accountId, document, (n) => variablesFor(n, inner), largest), (first) => {
      const smaller = smallerInner(first, inner, largest)
      return smaller === undefined ? Effect.succeed({ first, inner }) : sized(smaller)
    })
  return sized(new Map(children.map((c) => [c, c.innerPage] as const)))
}

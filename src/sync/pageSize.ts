import { Effect } from "effect"
import type { DocumentNode } from "graphql"
import type { CostBudget } from "../api/CostBudget.js"
import type { Variables } from "./model.js"
import type { ChildDefinition } from "./streams/Stream.js"

/** The fewest parents a page should carry: below it, children are asked fewer per parent (and followed up). */
export const minParentsPerPage = 10

export interface PageSize {
  /** Rows of the page. */
  readonly first: number
  /** Children asked per row, each child connection (the rest comes in follow-up queries). */
  readonly inner: ReadonlyMap<ChildDefinition, number>
}

/**
 * The size of a page of `document` by the account's cost budget: as many rows as a full bucket holds, up to
 * `largest`; when that is fewer than `minParentsPerPage`, each child's inner page is halved (down to 1) until it is not.
 */
export const pageSize = (
  budget: CostBudget["Type"],
  accountId: string,
  document: DocumentNode,
  children: ReadonlyArray<ChildDefinition>,
  largest: number,
  variablesFor: (first: number, inner: ReadonlyMap<ChildDefinition, number>) => Variables
): Effect.Effect<PageSize> =>
  Effect.gen(function* () {
    const inner = new Map(children.map((c) => [c, c.innerPage] as const))
    for (;;) {
      const first = yield* budget.pageSize(accountId, document, (n) => variablesFor(n, inner), largest)
      const shrinkable = [...inner].filter(([, k]) => k > 1)
      if (first >= Math.min(minParentsPerPage, largest) || shrinkable.length === 0) return { first, inner }
      for (const [child, k] of shrinkable) inner.set(child, Math.max(1, Math.floor(k / 2)))
    }
  })

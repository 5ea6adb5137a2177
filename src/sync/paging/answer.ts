import type { Place } from "./place.js"

/** A page as the service answered it: what the walk needs of it. */
export interface Answer {
  readonly place: Place
  /** The positions it paged. */
  readonly first: number
  /** Its nodes' ids, in order (the nodes the service left out are not there). */
  readonly ids: ReadonlyArray<string>
  /** Each node's cursor (paging after cursors). */
  readonly cursors?: ReadonlyArray<string> | undefined
  readonly hasNextPage: boolean
  /** The cursor of the last row it paged (paging after cursors), left out or not. */
  readonly endCursor?: string | null | undefined
}

export type Verdict =
  /** Land the rows from `newFrom`; `shifted`: the list moved; `checked`: the join proves no row was skipped. */
  | { readonly _tag: "Joined"; readonly newFrom: number; readonly shifted: boolean; readonly checked: boolean }
  /** The page does not join: ask at `place` instead. */
  | { readonly _tag: "AskAgain"; readonly place: Place; readonly why: string }
  /** The service answered a page asked further on with the rows of the start: it ignores `offset`. */
  | { readonly _tag: "IgnoresOffset"; readonly detail: string }
  /** The service ignores `after` too: nothing to page with. */
  | { readonly _tag: "CannotPage"; readonly detail: string }

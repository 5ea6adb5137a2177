import type { Connection } from "../auth/Connections.js"
import { namesAreUnique } from "./summary.js"

/** How `status` lays out what it prints: the width it has, how accounts are named, which columns give way first. */

/** How `status` prints its tables: relative times against `now`, within `maxWidth` unless `wide`. */
export interface StatusView {
  readonly now: number
  readonly wide: boolean
  readonly maxWidth: number
  /** Where lines of free text (reasons, errors, the API version's warning) wrap: on a terminal its width; piped, never (a pipe gets them whole). */
  readonly lineWidth?: number
}

export const textWidth = (view: StatusView) => view.lineWidth ?? view.maxWidth

/** What names an account in a table: its name when every name is its own (and not `wide`), else name and id. */
export const accountLabel = (connections: ReadonlyArray<Connection>, wide: boolean) => {
  const byName = namesAreUnique(connections.map((c) => c.accountName))
  const names = new Map(connections.map((c) => [c.accountId, c.accountName]))
  return (accountId: string) => {
    const name = names.get(accountId)
    return name === undefined ? accountId : byName || wide ? name : `${name} (${accountId})`
  }
}

/** Within the view's width (unless wide): `shrink` columns cut, then `optional` ones left out, in that order. */
export const fit = (view: StatusView, header: ReadonlyArray<string>, columns: { readonly shrink: ReadonlyArray<string>; readonly optional?: ReadonlyArray<string>; readonly right?: ReadonlyArray<string> }) => {
  const at = (names: ReadonlyArray<string> | undefined) => (names ?? []).map((n) => header.indexOf(n)).filter((i) => i >= 0)
  return view.wide ? { right: at(columns.right) } : { maxWidth: view.maxWidth, shrink: at(columns.shrink), optional: at(columns.optional), right: at(columns.right) }
}

export const iso = (d: Date | null) => d?.toISOString() ?? null

import { AdminRejected } from "./errors.js"
import { unit } from "./Prng.js"

/**
 * Pages as some services return them (`setPagingFaults`), per app, per account, or for every app and account:
 * - `withhold`: a share (0..1) of nodes left out of every page after paging, as a GraphQL server that authorizes each
 *   node does. Which nodes is drawn from the node's id and `seed`, so the same nodes are withheld from every page,
 *   listing and lookup, and from every line item connection; `pageInfo` and `totalCount` stay as computed before
 *   (a page holds fewer than `first` nodes while `hasNextPage` is true, `totalCount` counts the withheld ones).
 * - `withholdBlock`: besides, `withholdBlock` consecutive records of every collection (creation order, from position
 *   `blockStart`, else one drawn from `seed` below 500) left out the same way, as when one team's records are hidden
 *   from the app: the pages inside the block come back empty while `hasNextPage` is true.
 * - `withholdChildren`: the share of line items left out (default: `withhold`), drawn the same way by their own ids.
 * Each call replaces the settings of its scope: called again with another `seed` (or block), the set moves between two
 * passes, some records becoming withheld and others visible again.
 * - `ignoreOffset`: the collection fields ignore their `offset` argument (a page asked at any offset is the first
 *   one, or the one after `after`), as a service without offset support.
 */

export interface PagingFaultSettings {
  readonly withhold?: number | undefined
  readonly withholdBlock?: number | undefined
  readonly blockStart?: number | undefined
  readonly withholdChildren?: number | undefined
  readonly seed?: number | undefined
  readonly ignoreOffset?: boolean | undefined
}

/** What the GraphQL executor applies to the pages of one app's query of one account. */
export interface PagingView {
  /** Whether the record with this id, at this index of its collection (creation order), is left out (undefined: none is). */
  readonly withheld: ((id: string, index: number) => boolean) | undefined
  /** Whether the line item with this id is left out (undefined: none is). */
  readonly withheldChild: ((id: string) => boolean) | undefined
  readonly ignoreOffset: boolean
}

const none: PagingView = { withheld: undefined, withheldChild: undefined, ignoreOffset: false }

/** FNV-1a of a string: the index a node's draw is made at. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const drawn = (seed: number, share: number) => (share <= 0 ? undefined : (id: string) => unit(seed, fnv1a(id), 4_243) < share)

const viewOf = (settings: PagingFaultSettings): PagingView => {
  const seed = settings.seed ?? 1
  const byShare = drawn(seed, settings.withhold ?? 0)
  const block = settings.withholdBlock ?? 0
  const from = settings.blockStart ?? Math.floor(unit(seed, 0, 4_244) * 500)
  const inBlock = (index: number) => index >= from && index < from + block
  return {
    withheld: block <= 0 ? byShare && ((id) => byShare(id)) : (id, index) => inBlock(index) || (byShare?.(id) ?? false),
    withheldChild: drawn(seed, settings.withholdChildren ?? settings.withhold ?? 0),
    ignoreOffset: settings.ignoreOffset ?? false
  }
}

const isShare = (share: number | undefined) => share === undefined || (Number.isFinite(share) && share >= 0 && share < 1)
const isCount = (n: number | undefined) => n === undefined || (Number.isSafeInteger(n) && n >= 0)

export class PagingFaults {
  private fallback: PagingView = none
  private readonly byApp = new Map<string, PagingView>()
  private readonly byAccount = new Map<string, PagingView>()

  /** Replaces the settings of one app (by app id), one account, or (neither) every app and account without their own. */
  set(settings: PagingFaultSettings, scope: { readonly appId?: string; readonly accountId?: string }): void {
    if (!isShare(settings.withhold)) {
      throw new AdminRejected({ reason: `setPagingFaults: withhold must be a share of nodes from 0 up to (not including) 1, got ${settings.withhold}` })
    }
    if (!isShare(settings.withholdChildren)) {
      throw new AdminRejected({ reason: `setPagingFaults: withholdChildren must be a share of line items from 0 up to (not including) 1, got ${settings.withholdChildren}` })
    }
    for (const name of ["withholdBlock", "blockStart"] as const) {
      if (!isCount(settings[name])) throw new AdminRejected({ reason: `setPagingFaults: ${name} must be a whole number >= 0, got ${settings[name]}` })
    }
    if (scope.appId !== undefined && scope.accountId !== undefined) {
      throw new AdminRejected({ reason: "setPagingFaults: give clientId (one app) or accountId (one account), not both" })
    }
    const view = viewOf(settings)
    if (scope.appId !== undefined) this.byApp.set(scope.appId, view)
    else if (scope.accountId !== undefined) this.byAccount.set(scope.accountId, view)
    else this.fallback = view
  }

  /** The faults of one app's queries of one account: the account's settings, else the app's, else everyone's. */
  for(appId: string, accountId: string): PagingView {
    return this.byAccount.get(accountId) ?? this.byApp.get(appId) ?? this.fallback
  }
}

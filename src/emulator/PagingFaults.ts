import { AdminRejected } from "./errors.js"
import { unit } from "./Prng.js"

/**
 * Pages as some services return them (`setPagingFaults`), per app, per account, or for every app and account:
 * - `withhold`: a share (0..1) of nodes left out of every page after paging, as a GraphQL server that authorizes each
 *   node does. Which nodes is drawn from the node's id and `seed`, so the same nodes are withheld from every page,
 *   listing and lookup, and from every line item connection; `pageInfo` and `totalCount` stay as computed before
 *   (a page holds fewer than `first` nodes while `hasNextPage` is true, `totalCount` counts the withheld ones).
 * - `ignoreOffset`: the collection fields ignore their `offset` argument (a page asked at any offset is the first
 *   one, or the one after `after`), as a service without offset support.
 */

export interface PagingFaultSettings {
  readonly withhold?: number | undefined
  readonly seed?: number | undefined
  readonly ignoreOffset?: boolean | undefined
}

/** What the GraphQL executor applies to the pages of one app's query of one account. */
export interface PagingView {
  /** Whether the node with this id is left out (undefined: none is). */
  readonly withheld: ((id: string) => boolean) | undefined
  readonly ignoreOffset: boolean
}

const none: PagingView = { withheld: undefined, ignoreOffset: false }

/** FNV-1a of a string: the index a node's draw is made at. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const viewOf = (settings: PagingFaultSettings): PagingView => {
  const share = settings.withhold ?? 0
  const seed = settings.seed ?? 1
  return {
    withheld: share <= 0 ? undefined : (id) => unit(seed, fnv1a(id), 4_243) < share,
    ignoreOffset: settings.ignoreOffset ?? false
  }
}

export class PagingFaults {
  private fallback: PagingView = none
  private readonly byApp = new Map<string, PagingView>()
  private readonly byAccount = new Map<string, PagingView>()

  /** Replaces the settings of one app (by app id), one account, or (neither) every app and account without their own. */
  set(settings: PagingFaultSettings, scope: { readonly appId?: string; readonly accountId?: string }): void {
    const share = settings.withhold ?? 0
    if (!Number.isFinite(share) || share < 0 || share >= 1) {
      throw new AdminRejected({ reason: `setPagingFaults: withhold must be a share of nodes from 0 up to (not including) 1, got ${settings.withhold}` })
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

import { Effect } from "effect"
import type { ApiVersions } from "./ApiVersions.js"
import type { Account, AppsAndAccounts } from "./AppsAndAccounts.js"
import type { Churn } from "./Churn.js"
import type { Collection } from "./data/Collection.js"
import { AdminRpcs, EmulatorAdminError, type Limits } from "./EmulatorAdmin.js"
import { AdminRejected } from "./errors.js"
import type { FaultInjector } from "./Faults.js"
import type { Grants } from "./Grants.js"
import type { PagingFaults } from "./PagingFaults.js"
import type { Approval } from "./OAuthEndpoints.js"
import type { RecordChanges } from "./RecordChanges.js"
import type { LimitsBook } from "./RateLimits.js"
import type { StatsCounter } from "./Stats.js"
import type { TokenInvalidation } from "./TokenInvalidation.js"
import type { VirtualClock } from "./VirtualClock.js"
import type { Webhooks } from "./Webhooks.js"
import type { WebhookSubscriptions } from "./WebhookSubscriptions.js"

/** The admin API's handlers (AdminRpcs): each operation is a synchronous change of the emulator's state. */

export interface AdminDeps {
  readonly appsAndAccounts: AppsAndAccounts
  readonly grants: Grants
  readonly invalidation: TokenInvalidation
  readonly clock: VirtualClock
  readonly limits: LimitsBook
  readonly faults: FaultInjector
  readonly pagingFaults: PagingFaults
  readonly stats: StatsCounter
  readonly approval: Approval
  readonly webhooks: Webhooks
  readonly changes: RecordChanges
  readonly churn: Churn
  readonly subscriptions: WebhookSubscriptions
  readonly versions: ApiVersions
}

const op = <A>(operation: string, f: () => A): Effect.Effect<A, EmulatorAdminError> =>
  Effect.try({
    try: f,
    catch: (e) => new EmulatorAdminError({ operation, reason: e instanceof AdminRejected || e instanceof Error ? e.message : String(e) })
  })

/** The live records of `ids` (unknown or deleted ids left out), each once, in creation order. */
const liveIndicesOf = (collection: Collection, ids: ReadonlyArray<string>): Array<number> =>
  [...new Set(ids.flatMap((id) => collection.indexOfId(id) ?? []))].filter((i) => collection.isLive(i)).sort((x, y) => x - y)

export const adminHandlers = (deps: AdminDeps) => {
  const { appsAndAccounts, grants, invalidation, clock, limits, faults, pagingFaults, stats, approval, webhooks, changes, churn, subscriptions, versions } = deps

  return AdminRpcs.of({
    createApp: (spec) =>
      op("createApp", () => {
        const app = appsAndAccounts.createApp(spec)
        return { appId: app.appId, clientId: app.clientId }
      }),
    createAccount: (spec) =>
      op("createAccount", () => {
        const a = appsAndAccounts.createAccount(spec)
        return { accountId: a.accountId, name: a.name, adminUserId: a.adminUserId }
      }),
    listRecords: ({ accountId, collection, servedTo, ids }) =>
      op("listRecords", () => {
        const a = appsAndAccounts.requireAccount("listRecords", accountId)
        const records = changes.recordsOf("listRecords", a, collection)
        const live = ids === undefined ? records.collection.liveIndices() : liveIndicesOf(records.collection, ids)
        const listed = live.map((i) => a.world.listed(records.name, i))
        const view = servedTo === undefined ? undefined : pagingFaults.for(appsAndAccounts.requireApp("listRecords", servedTo).appId, a.accountId)
        if (view === undefined || (view.withheld === undefined && view.withheldChild === undefined)) return listed
        const children = records.def.children?.field
        const { withheld, withheldChild } = view
        const childServed = (item: unknown) => withheldChild === undefined || !withheldChild(String((item as { id?: unknown }).id))
        return listed
          .filter((r, k) => withheld === undefined || !withheld(String(r.id), live[k]!))
          .map((r) => (children === undefined ? r : { ...r, [children]: (r[children] as ReadonlyArray<unknown>).filter(childServed) }))
      }),
    recordVersions: ({ accountId, collection, id }) =>
      op("recordVersions", () => changes.versions(appsAndAccounts.requireAccount("recordVersions", accountId), collection, id)),
    createRecords: ({ accountId, collection, count, seed }) =>
      op("createRecords", () => ({ ids: changes.create("createRecords", appsAndAccounts.requireAccount("createRecords", accountId), collection, count, seed) })),
    editRecords: ({ accountId, collection, ...selection }) =>
      op("editRecords", () => ({ ids: changes.edit("editRecords", appsAndAccounts.requireAccount("editRecords", accountId), collection, selection) })),
    deleteRecords: ({ accountId, collection, ...selection }) =>
      op("deleteRecords", () => ({ ids: changes.remove("deleteRecords", appsAndAccounts.requireAccount("deleteRecords", accountId), collection, selection) })),
    editLineItems: ({ accountId, collection, ...selection }) =>
      op("editLineItems", () => ({ ids: changes.editLineItems("editLineItems", appsAndAccounts.requireAccount("editLineItems", accountId), collection, selection) })),
    setChurn: (options) =>
      op("setChurn", () => {
        const { accountId, ...spec } = options
        const account = accountId === undefined ? undefined : appsAndAccounts.requireAccount("setChurn", accountId)
        churn.set(spec.stop ? null : spec, account)
      }),
    churnLog: ({ accountId }) => op("churnLog", () => churn.log(appsAndAccounts.requireAccount("churnLog", accountId).accountId)),
    setCursorMode: ({ mode, accountId }) =>
      op("setCursorMode", () => {
        if (accountId === undefined) appsAndAccounts.cursorMode = mode
        else appsAndAccounts.requireAccount("setCursorMode", accountId).cursorMode = mode
      }),
    setApproval: (options) =>
      op("setApproval", () => {
        if (options.accountId !== undefined) appsAndAccounts.requireAccount("setApproval", options.accountId)
        approval.mode = options.mode
        approval.accountId = options.accountId
      }),
    marketplaceDisconnect: ({ clientId, accountId }) =>
      op("marketplaceDisconnect", () => {
        const app = appsAndAccounts.requireApp("marketplaceDisconnect", clientId)
        const account = appsAndAccounts.requireAccount("marketplaceDisconnect", accountId)
        invalidation.disconnectAll(app, account, "the admin disconnected the app from the marketplace")
        webhooks.emit(app, account, "APP_DISCONNECT", clock.nowMs())
      }),
    automaticDisconnect: ({ clientId, accountId, reason }) =>
      op("automaticDisconnect", () => {
        invalidation.automaticDisconnect(
          appsAndAccounts.requireApp("automaticDisconnect", clientId),
          appsAndAccounts.requireAccount("automaticDisconnect", accountId),
          reason
        )
      }),
    regenerateSecret: ({ clientId }) =>
      op("regenerateSecret", () => ({ clientSecret: invalidation.regenerateSecret(appsAndAccounts.requireApp("regenerateSecret", clientId)) })),
    reauthorizeAfterScopeChange: ({ clientId, accountId, scopes }) =>
      op("reauthorizeAfterScopeChange", () =>
        invalidation.reauthorizeAfterScopeChange(
          appsAndAccounts.requireApp("reauthorizeAfterScopeChange", clientId),
          appsAndAccounts.requireAccount("reauthorizeAfterScopeChange", accountId),
          scopes
        )
      ),
    startSandboxSession: ({ clientId, accountId }) =>
      op("startSandboxSession", () => ({
        accessToken: invalidation.startSandboxSession(
          appsAndAccounts.requireApp("startSandboxSession", clientId),
          appsAndAccounts.requireAccount("startSandboxSession", accountId)
        )
      })),
    setLimits: (options) =>
      op("setLimits", () => {
        const { clientId, accountId, ...rest } = options
        if ((clientId === undefined) !== (accountId === undefined)) {
          throw new AdminRejected({ reason: "setLimits: give both clientId and accountId (one pair) or neither (the defaults)" })
        }
        const pair =
          clientId !== undefined && accountId !== undefined
            ? { appId: appsAndAccounts.requireApp("setLimits", clientId).appId, accountId: appsAndAccounts.requireAccount("setLimits", accountId).accountId }
            : undefined
        limits.set(rest as Limits, clock.nowMs(), pair)
      }),
    setFaults: (f) => op("setFaults", () => faults.set(f)),
    setPagingFaults: ({ clientId, accountId, ...settings }) =>
      op("setPagingFaults", () =>
        pagingFaults.set(settings, {
          ...(clientId !== undefined ? { appId: appsAndAccounts.requireApp("setPagingFaults", clientId).appId } : {}),
          ...(accountId !== undefined ? { accountId: appsAndAccounts.requireAccount("setPagingFaults", accountId).accountId } : {})
        })
      ),
    advanceClock: ({ seconds }) => op("advanceClock", () => clock.advance(seconds)),
    isRefreshTokenValid: ({ clientId, refreshToken }) => op("isRefreshTokenValid", () => grants.isRefreshTokenValid(clientId, refreshToken)),
    liveRefreshTokens: ({ clientId, accountId }) => op("liveRefreshTokens", () => grants.liveRefreshTokens(clientId, accountId)),
    stats: () => op("stats", () => stats.snapshot()),
    resetStats: () => op("resetStats", () => stats.reset()),
    updateApp: ({ clientId, ...patch }) =>
      op("updateApp", () => {
        appsAndAccounts.updateApp(clientId, patch)
      }),
    webhookDeliveries: () => op("webhookDeliveries", () => webhooks.list()),
    setWebhookOptions: (options) => op("setWebhookOptions", () => webhooks.setOptions(options)),
    webhookSubscriptions: (filter) =>
      op("webhookSubscriptions", () =>
        subscriptions.list({
          ...(filter.clientId !== undefined ? { appId: appsAndAccounts.requireApp("webhookSubscriptions", filter.clientId).appId } : {}),
          ...(filter.accountId !== undefined ? { accountId: appsAndAccounts.requireAccount("webhookSubscriptions", filter.accountId).accountId } : {})
        })
      ),
    redeliverWebhook: () =>
      op("redeliverWebhook", () => {
        const d = webhooks.redeliverLast((appId) => appsAndAccounts.apps.get(appId))
        if (!d) throw new AdminRejected({ reason: "redeliverWebhook: no webhook event has been sent yet" })
        return d
      }),
    setApiVersions: ({ versions: specs, warnDays }) => op("setApiVersions", () => versions.set(specs, warnDays)),
    apiVersions: () => op("apiVersions", () => versions.list()),
    clock: () => op("clock", () => ({ nowMs: clock.nowMs(), offsetSeconds: clock.offsetSeconds }))
  })
}

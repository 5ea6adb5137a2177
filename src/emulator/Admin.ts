import { Effect } from "effect"
import type { EmulatorAdmin, Faults, JobRecord, Limits } from "./EmulatorAdmin.js"
import { EmulatorAdminError } from "./EmulatorAdmin.js"
import { AdminRejected } from "./errors.js"
import type { FaultInjector } from "./Faults.js"
import type { Approval } from "./OAuthEndpoints.js"
import type { LimitsBook } from "./RateLimits.js"
import type { Account, Registry } from "./Registry.js"
import type { StatsCounter } from "./Stats.js"
import type { Webhooks } from "./Webhooks.js"

/** The in-process `EmulatorAdmin`: each operation is a synchronous change of the emulator's state. */

export interface AdminDeps {
  readonly baseUrl: string
  readonly registry: Registry
  readonly limits: LimitsBook
  readonly faults: FaultInjector
  readonly stats: StatsCounter
  readonly approval: Approval
  readonly webhooks: Webhooks
}

const op = <A>(operation: string, f: () => A): Effect.Effect<A, EmulatorAdminError> =>
  Effect.try({
    try: f,
    catch: (e) => new EmulatorAdminError({ operation, reason: e instanceof AdminRejected || e instanceof Error ? e.message : String(e) })
  })

const reasons = ["churn", "downgrade", "deactivation"] as const

export const makeAdmin = (deps: AdminDeps): EmulatorAdmin => {
  const { registry, limits, faults, stats, approval, webhooks } = deps
  let draws = 0

  const selectJobs = (operation: string, account: Account, options: { count?: number; ids?: ReadonlyArray<string>; seed?: number }) => {
    if (options.ids) {
      return options.ids.map((id) => {
        const index = account.jobs.indexOfId(id)
        if (index === undefined || !account.jobs.isLive(index)) throw new AdminRejected({ reason: `${operation}: account ${account.accountId} has no live job ${id}` })
        return index
      })
    }
    const count = options.count ?? 1
    if (!Number.isSafeInteger(count) || count < 0) throw new AdminRejected({ reason: `${operation}: count must be an integer >= 0, got ${count}` })
    return account.jobs.pickLive(count, options.seed ?? account.seed + 7 * ++draws)
  }

  return {
    baseUrl: deps.baseUrl,
    createApp: (spec) =>
      op("createApp", () => {
        const app = registry.createApp(spec)
        return { appId: app.appId, clientId: app.clientId }
      }),
    createAccount: (spec) =>
      op("createAccount", () => {
        const a = registry.createAccount(spec)
        return { accountId: a.accountId, name: a.name, adminUserId: a.adminUserId }
      }),
    seedJobs: (accountId, count, seed) =>
      op("seedJobs", () => {
        const a = registry.requireAccount("seedJobs", accountId)
        a.jobs.append(count, seed ?? a.seed + a.jobs.size, registry.clock.nowMs())
        return { total: a.jobs.liveCount }
      }),
    listJobs: (accountId) =>
      op("listJobs", (): ReadonlyArray<JobRecord> => {
        const a = registry.requireAccount("listJobs", accountId)
        return a.jobs.liveIndices().map((i) => a.jobs.job(i))
      }),
    editJobs: (accountId, options) =>
      op("editJobs", () => {
        const a = registry.requireAccount("editJobs", accountId)
        const indices = selectJobs("editJobs", a, options)
        a.jobs.edit(indices, options.seed ?? ++draws, registry.clock.nowMs())
        return { ids: indices.map((i) => a.jobs.jobId(i)) }
      }),
    deleteJobs: (accountId, options) =>
      op("deleteJobs", () => {
        const a = registry.requireAccount("deleteJobs", accountId)
        const indices = selectJobs("deleteJobs", a, options)
        const ids = indices.map((i) => a.jobs.jobId(i))
        a.jobs.remove(indices)
        return { ids }
      }),
    setApproval: (options) =>
      op("setApproval", () => {
        if (options.mode !== "auto" && options.mode !== "manual") throw new AdminRejected({ reason: `setApproval: mode must be auto or manual` })
        if (options.accountId !== undefined) registry.requireAccount("setApproval", options.accountId)
        approval.mode = options.mode
        approval.accountId = options.accountId
      }),
    marketplaceDisconnect: (clientId, accountId) =>
      op("marketplaceDisconnect", () => {
        const app = registry.requireApp("marketplaceDisconnect", clientId)
        const account = registry.requireAccount("marketplaceDisconnect", accountId)
        registry.disconnectAll(app, account, "the admin disconnected the app from the marketplace")
        webhooks.emit(app, account, "APP_DISCONNECT", registry.clock.nowMs())
      }),
    automaticDisconnect: (clientId, accountId, reason) =>
      op("automaticDisconnect", () => {
        if (!reasons.includes(reason)) throw new AdminRejected({ reason: `automaticDisconnect: reason must be one of ${reasons.join(", ")}` })
        registry.automaticDisconnect(
          registry.requireApp("automaticDisconnect", clientId),
          registry.requireAccount("automaticDisconnect", accountId),
          reason
        )
      }),
    regenerateSecret: (clientId) =>
      op("regenerateSecret", () => ({ clientSecret: registry.regenerateSecret(registry.requireApp("regenerateSecret", clientId)) })),
    reauthorizeAfterScopeChange: (clientId, accountId, scopes) =>
      op("reauthorizeAfterScopeChange", () =>
        registry.reauthorizeAfterScopeChange(
          registry.requireApp("reauthorizeAfterScopeChange", clientId),
          registry.requireAccount("reauthorizeAfterScopeChange", accountId),
          scopes
        )
      ),
    startSandboxSession: (clientId, accountId) =>
      op("startSandboxSession", () => ({
        accessToken: registry.startSandboxSession(
          registry.requireApp("startSandboxSession", clientId),
          registry.requireAccount("startSandboxSession", accountId)
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
            ? { appId: registry.requireApp("setLimits", clientId).appId, accountId: registry.requireAccount("setLimits", accountId).accountId }
            : undefined
        limits.set(rest as Limits, registry.clock.nowMs(), pair)
      }),
    setFaults: (f: Faults) => op("setFaults", () => faults.set(f)),
    advanceClock: (seconds) => op("advanceClock", () => registry.clock.advance(seconds)),
    isRefreshTokenValid: (clientId, refreshToken) => op("isRefreshTokenValid", () => registry.isRefreshTokenValid(clientId, refreshToken)),
    liveRefreshTokens: (clientId, accountId) => op("liveRefreshTokens", () => registry.liveRefreshTokens(clientId, accountId)),
    stats: () => op("stats", () => stats.snapshot()),
    resetStats: () => op("resetStats", () => stats.reset()),
    updateApp: (clientId, patch) =>
      op("updateApp", () => {
        registry.updateApp(clientId, patch)
      }),
    webhookDeliveries: () => op("webhookDeliveries", () => webhooks.list()),
    redeliverWebhook: () =>
      op("redeliverWebhook", () => {
        const d = webhooks.redeliverLast((appId) => registry.apps.get(appId))
        if (!d) throw new AdminRejected({ reason: "redeliverWebhook: no webhook event has been sent yet" })
        return d
      }),
    clock: () => op("clock", () => ({ nowMs: registry.clock.nowMs(), offsetSeconds: registry.clock.offsetSeconds }))
  }
}

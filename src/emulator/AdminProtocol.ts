import { Schema } from "effect"

/**
 * The admin API over HTTP: `POST /__admin/<operation>` with a JSON body of named arguments, answered
 * `200 {"result": ...}` or `400 {"error": {"operation", "reason"}}`. Shared by the server and EmulatorAdminClient.
 */

const Str = Schema.String
const opt = Schema.optional
const Scopes = Schema.Array(Schema.String)
const Num = Schema.Number

export const AppSpecBody = Schema.Struct({
  clientId: Str, clientSecret: Str, redirectUri: Str, webhookUrl: opt(Str), webhookTopics: opt(Scopes), scopes: opt(Scopes), rotation: opt(Schema.Boolean),
  name: opt(Str), author: opt(Str)
})
export const AccountSpecBody = Schema.Struct({
  accountId: opt(Str), name: opt(Str), jobs: opt(Num), seed: opt(Num), sizes: opt(Schema.Record({ key: Str, value: Num })),
  cursorMode: opt(Schema.Literal("offset", "keyset"))
})
const RecordSelectionBody = Schema.Struct({ accountId: Str, collection: Str, count: opt(Num), ids: opt(Schema.Array(Str)), seed: opt(Num) })
const JobSelection = Schema.Struct({ accountId: Str, count: opt(Num), ids: opt(Scopes), seed: opt(Num) })
const LimitsBody = Schema.Struct({
  clientId: opt(Str), accountId: opt(Str), maxPoints: opt(Num), restoreRate: opt(Num), requestLimit: opt(Num),
  requestWindowSeconds: opt(Num), maxPageSize: opt(Num)
})
const FaultsBody = Schema.Struct({
  errorRate: opt(Num), dropRate: opt(Num), truncateRate: opt(Num), latencyRate: opt(Num), latencyMs: opt(Num), seed: opt(Num)
})
const Empty = Schema.Struct({})

export const requestBodies = {
  createApp: AppSpecBody,
  createAccount: AccountSpecBody,
  seedJobs: Schema.Struct({ accountId: Str, count: Num, seed: opt(Num) }),
  listJobs: Schema.Struct({ accountId: Str }),
  editJobs: JobSelection,
  deleteJobs: JobSelection,
  listRecords: Schema.Struct({ accountId: Str, collection: Str }),
  createRecords: Schema.Struct({ accountId: Str, collection: Str, count: Num, seed: opt(Num) }),
  editRecords: RecordSelectionBody,
  deleteRecords: RecordSelectionBody,
  editLineItems: Schema.extend(RecordSelectionBody, Schema.Struct({ add: opt(Num), remove: opt(Num), edit: opt(Num) })),
  setChurn: Schema.Struct({
    accountId: opt(Str), creates: opt(Num), edits: opt(Num), deletes: opt(Num), collections: opt(Schema.Array(Str)), queries: opt(Num), seed: opt(Num), stop: opt(Schema.Boolean)
  }),
  churnLog: Schema.Struct({ accountId: Str }),
  setCursorMode: Schema.Struct({ mode: Schema.Literal("offset", "keyset"), accountId: opt(Str) }),
  setApproval: Schema.Struct({ mode: Schema.Literal("auto", "manual"), accountId: opt(Str) }),
  marketplaceDisconnect: Schema.Struct({ clientId: Str, accountId: Str }),
  automaticDisconnect: Schema.Struct({ clientId: Str, accountId: Str, reason: Schema.Literal("churn", "downgrade", "deactivation") }),
  regenerateSecret: Schema.Struct({ clientId: Str }),
  reauthorizeAfterScopeChange: Schema.Struct({ clientId: Str, accountId: Str, scopes: Scopes }),
  startSandboxSession: Schema.Struct({ clientId: Str, accountId: Str }),
  setLimits: LimitsBody,
  setFaults: FaultsBody,
  advanceClock: Schema.Struct({ seconds: Num }),
  isRefreshTokenValid: Schema.Struct({ clientId: Str, refreshToken: Str }),
  liveRefreshTokens: Schema.Struct({ clientId: Str, accountId: Str }),
  stats: Empty,
  resetStats: Empty,
  updateApp: Schema.Struct({
    clientId: Str, redirectUri: opt(Str), webhookUrl: opt(Schema.NullOr(Str)), rotation: opt(Schema.Boolean), scopes: opt(Scopes), webhookTopics: opt(Scopes)
  }),
  webhookDeliveries: Empty,
  setWebhookOptions: Schema.Struct({
    duplicateRate: opt(Num), delayMs: opt(Num), delayRandom: opt(Schema.Boolean), reorderWindowMs: opt(Num),
    accountIdEncoding: opt(Schema.Literal("graphql", "numeric")), seed: opt(Num)
  }),
  webhookSubscriptions: Schema.Struct({ clientId: opt(Str), accountId: opt(Str) }),
  redeliverWebhook: Empty,
  clock: Empty
} as const

export type AdminOperation = keyof typeof requestBodies
export const adminOperations = Object.keys(requestBodies) as ReadonlyArray<AdminOperation>

const JobRecordResult = Schema.Struct(
  { id: Str, jobNumber: Num, title: Schema.NullOr(Str), updatedAt: Str, createdAt: Str },
  Schema.Record({ key: Str, value: Schema.Unknown })
)
const Delivery = Schema.Struct({
  id: Str, topic: Str, appId: Str, accountId: Str, itemId: Str, url: Str, body: Str, status: Schema.Literal("pending", "delivered", "failed"),
  attempts: Num, lastStatus: opt(Num), lastError: opt(Str), redeliveryOf: opt(Str), answerMs: opt(Num)
})
const SubscriptionInfo = Schema.Struct({ id: Str, appId: Str, accountId: Str, topic: Str, url: Str, createdAt: Str })
const Void = Schema.NullOr(Schema.Unknown)

export const resultBodies = {
  createApp: Schema.Struct({ appId: Str, clientId: Str }),
  createAccount: Schema.Struct({ accountId: Str, name: Str, adminUserId: Str }),
  seedJobs: Schema.Struct({ total: Num }),
  listJobs: Schema.Array(JobRecordResult),
  editJobs: Schema.Struct({ ids: Scopes }),
  deleteJobs: Schema.Struct({ ids: Scopes }),
  listRecords: Schema.Array(Schema.Record({ key: Str, value: Schema.Unknown })),
  createRecords: Schema.Struct({ ids: Scopes }),
  editRecords: Schema.Struct({ ids: Scopes }),
  deleteRecords: Schema.Struct({ ids: Scopes }),
  editLineItems: Schema.Struct({ ids: Scopes }),
  setChurn: Void,
  churnLog: Schema.Array(Schema.Struct({ collection: Str, kind: Schema.Literal("create", "update", "destroy"), id: Str, atMs: Num })),
  setCursorMode: Void,
  setApproval: Void,
  marketplaceDisconnect: Void,
  automaticDisconnect: Void,
  regenerateSecret: Schema.Struct({ clientSecret: Str }),
  reauthorizeAfterScopeChange: Void,
  startSandboxSession: Schema.Struct({ accessToken: Str }),
  setLimits: Void,
  setFaults: Void,
  advanceClock: Void,
  isRefreshTokenValid: Schema.Boolean,
  liveRefreshTokens: Num,
  stats: Schema.Struct({
    tokenRequests: Schema.Struct({ authorization_code: Num, refresh_token: Num, failed: Num }),
    graphqlRequests: Num,
    throttled: Num,
    rateLimited: Num,
    faultsInjected: Schema.Struct({ error: Num, drop: Num, truncate: Num, latency: Num }),
    refreshesByAccount: Schema.Record({ key: Str, value: Num }),
    costPointsByAccount: Schema.Record({ key: Str, value: Num })
  }),
  resetStats: Void,
  updateApp: Void,
  webhookDeliveries: Schema.Array(Delivery),
  setWebhookOptions: Void,
  webhookSubscriptions: Schema.Array(SubscriptionInfo),
  redeliverWebhook: Delivery,
  clock: Schema.Struct({ nowMs: Num, offsetSeconds: Num })
} as const satisfies Record<AdminOperation, Schema.Schema.Any>

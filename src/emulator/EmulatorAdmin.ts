import { Rpc, type RpcClient, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"

/**
 * The emulator's control surface, declared once: an @effect/rpc group whose Schemas are the operations' arguments and
 * results. Admin.ts implements it; the in-process client (Emulator.make's `admin`) and the HTTP one
 * (EmulatorAdminClient, `POST /__admin` when the emulator runs with `--admin`) both come from this declaration.
 * Tests, the demo and benchmarks drive the emulator only through it.
 */

const Str = Schema.String
const Num = Schema.Number
const Strings = Schema.Array(Schema.String)
const opt = Schema.optional

/** An admin operation that was refused (an unknown app, account or record, bad arguments), named with its reason. */
export class EmulatorAdminError extends Schema.TaggedError<EmulatorAdminError>()("EmulatorAdminError", {
  operation: Str,
  reason: Str
}) {
  override get message() {
    return `emulator admin ${this.operation}: ${this.reason}`
  }
}

// ---- the data the operations take and give --------------------------------------------------------------------

export const AppSpec = Schema.Struct({
  clientId: Str,
  clientSecret: Str,
  redirectUri: Str,
  webhookUrl: opt(Str),
  /**
   * Change topics (JOB_UPDATE, CLIENT_DESTROY, ... of WebHookTopicEnum) sent to `webhookUrl` for every connected
   * account, as if each had subscribed to them there (tests and benchmarks, without the subscription mutation).
   */
  webhookTopics: opt(Strings),
  /** Scopes shown at consent and enforced at the GraphQL endpoint; default: the scope of every collection (all reads) */
  scopes: opt(Strings),
  /** Refresh Token Rotation: a refresh returns a new refresh token and the old one stops working. Default false. */
  rotation: opt(Schema.Boolean),
  name: opt(Str),
  author: opt(Str)
})
export type AppSpec = typeof AppSpec.Type

export const AccountSpec = Schema.Struct({
  /** An EncodedId-like id; generated when absent. */
  accountId: opt(Str),
  name: opt(Str),
  /** Seeded jobs to create at once (deterministic for a given seed); the other collections scale with it. */
  jobs: opt(Num),
  /** Records per collection (by root field name), over the sizes that scale with `jobs`. */
  sizes: opt(Schema.Record({ key: Str, value: Num })),
  /** The cursors its connections issue: offsets (the default, as graphql-ruby's) or keyset cursors. */
  cursorMode: opt(Schema.Literal("offset", "keyset")),
  seed: opt(Num)
})
export type AccountSpec = typeof AccountSpec.Type

/** A record exactly as the GraphQL endpoint serves it: its id and every other field by name. */
export const ListedRecord = Schema.Struct({ id: Str }, Schema.Record({ key: Str, value: Schema.Unknown }))
export type ListedRecord = typeof ListedRecord.Type

/** Which records an admin change touches: these ids, or `count` drawn from `seed`. */
export const RecordSelection = Schema.Struct({ count: opt(Num), ids: opt(Strings), seed: opt(Num) })
export type RecordSelection = typeof RecordSelection.Type

export const ChurnOptions = Schema.Struct({
  accountId: opt(Str),
  /** Per query; a fraction is the chance of one more. */
  creates: opt(Num),
  edits: opt(Num),
  deletes: opt(Num),
  collections: opt(Strings),
  /** Queries of each collection churned (default every one): a pass's first pages, not its closing listing. */
  queries: opt(Num),
  seed: opt(Num),
  stop: opt(Schema.Boolean)
})
export type ChurnOptions = typeof ChurnOptions.Type

/** A change to a record, as churn logs it and webhooks report it. */
export const ChangeInfo = Schema.Struct({ collection: Str, kind: Schema.Literal("create", "update", "destroy"), id: Str, atMs: Num })
export type ChangeInfo = typeof ChangeInfo.Type

export const Limits = Schema.Struct({
  maxPoints: opt(Num),
  restoreRate: opt(Num),
  /** Request-rate guard: at most `requestLimit` requests per `requestWindowSeconds` per app and account (HTTP 429). */
  requestLimit: opt(Num),
  requestWindowSeconds: opt(Num),
  /** Largest `first`/`last` accepted on a connection. */
  maxPageSize: opt(Num)
})
export type Limits = typeof Limits.Type

export const Faults = Schema.Struct({
  /** Probability of an HTTP 5xx answer (0..1), per GraphQL or token request. */
  errorRate: opt(Num),
  /** Probability the connection is destroyed without an answer. */
  dropRate: opt(Num),
  /** Probability the body is cut short (invalid JSON) with a 200 status. */
  truncateRate: opt(Num),
  /** Probability of an added delay of `latencyMs`. */
  latencyRate: opt(Num),
  latencyMs: opt(Num),
  /** Seed of the fault draw, for repeatable runs. */
  seed: opt(Num)
})
export type Faults = typeof Faults.Type

/** Pages as some services return them (PagingFaults.ts); each call replaces the settings of its scope. */
export const PagingFaultOptions = Schema.Struct({
  /**
   * Share of nodes (0 up to 1) left out of every page after paging, the same nodes every time (drawn by id and
   * `seed`), line items too; `pageInfo` and `totalCount` stay as computed before.
   */
  withhold: opt(Num),
  /** Besides, this many consecutive records of every collection (creation order) left out, from `blockStart` (else drawn from `seed`). */
  withholdBlock: opt(Num),
  blockStart: opt(Num),
  /** The share of line items left out (default: `withhold`). */
  withholdChildren: opt(Num),
  seed: opt(Num),
  /** The collection fields ignore `offset`: a page asked at any offset is the first (or the one after `after`). */
  ignoreOffset: opt(Schema.Boolean),
  /** The scope: one app's queries, one account's, or (neither) every app and account without settings of their own. */
  clientId: opt(Str),
  accountId: opt(Str)
})
export type PagingFaultOptions = typeof PagingFaultOptions.Type

export const EmulatorStats = Schema.Struct({
  tokenRequests: Schema.Struct({ authorization_code: Num, refresh_token: Num, failed: Num }),
  graphqlRequests: Num,
  throttled: Num,
  rateLimited: Num,
  faultsInjected: Schema.Struct({ error: Num, drop: Num, truncate: Num, latency: Num }),
  /** Successful refresh grants per account id. */
  refreshesByAccount: Schema.Record({ key: Str, value: Num }),
  /** Query cost points charged (actual cost deducted from the bucket) per account id. */
  costPointsByAccount: Schema.Record({ key: Str, value: Num })
})
export type EmulatorStats = typeof EmulatorStats.Type

/** One webhook event delivery (a redelivery or a duplicate is its own entry, pointing at the original). */
export const WebhookDeliveryInfo = Schema.Struct({
  id: Str,
  topic: Str,
  appId: Str,
  /** The account's GraphQL id (the body spells it as `accountIdEncoding` says). */
  accountId: Str,
  /** The record the event is about (the account itself for APP_DISCONNECT). */
  itemId: Str,
  url: Str,
  /** The raw body as sent (the HMAC is over these bytes). */
  body: Str,
  status: Schema.Literal("pending", "delivered", "failed"),
  attempts: Num,
  lastStatus: opt(Num),
  lastError: opt(Str),
  redeliveryOf: opt(Str),
  /** Milliseconds from the last attempt's request to the receiver's answer (measured at the sender). */
  answerMs: opt(Num)
})
export type WebhookDeliveryInfo = typeof WebhookDeliveryInfo.Type

/** How change events are delivered (`setWebhookOptions`; each call replaces the previous settings). */
export const WebhookOptions = Schema.Struct({
  /** Chance (0..1) that an event is delivered a second time, byte for byte (the service sends at least once). */
  duplicateRate: opt(Num),
  /** Milliseconds each delivery waits before its first attempt: exactly that, or a uniform draw up to it with `delayRandom`. */
  delayMs: opt(Num),
  delayRandom: opt(Schema.Boolean),
  /** Deliveries are held this long (ms) and then started in a shuffled order; 0 (default) sends each at once. */
  reorderWindowMs: opt(Num),
  /** How `accountId` is spelled: the account's GraphQL EncodedId (default), or the base64 of its number as the real service's webhooks do. */
  accountIdEncoding: opt(Schema.Literal("graphql", "numeric")),
  /** Seed of the duplicate, delay and shuffle draws. */
  seed: opt(Num)
})
export type WebhookOptions = typeof WebhookOptions.Type

/** A webhook subscription of an app for an account (`webhookSubscriptionCreate`). */
export const WebhookSubscriptionInfo = Schema.Struct({ id: Str, appId: Str, accountId: Str, topic: Str, url: Str, createdAt: Str })
export type WebhookSubscriptionInfo = typeof WebhookSubscriptionInfo.Type

/** Settings of an app that can change without touching its tokens (a Draft-style edit). */
export const AppPatch = Schema.Struct({
  redirectUri: opt(Str),
  /** null removes the webhook URL. */
  webhookUrl: opt(Schema.NullOr(Str)),
  rotation: opt(Schema.Boolean),
  scopes: opt(Strings),
  /** Replaces the app-level change topics (see AppSpec.webhookTopics); [] stops them. */
  webhookTopics: opt(Strings)
})
export type AppPatch = typeof AppPatch.Type

/** An API version the emulator serves (`setApiVersions`). */
export const ApiVersionSpec = Schema.Struct({
  /** `YYYY-MM-DD`, the value of the `X-SERVICE-GRAPHQL-VERSION` header that picks it. */
  version: Str,
  /** Its schema as SDL (default: the vendored `schema/service-subset.graphql`). */
  schema: opt(Str),
  /** `YYYY-MM-DD`: from this day (UTC, emulator clock) it is removed, and the oldest supported version answers for it. */
  removedAt: opt(Str)
})

/** Every API version served, replacing the previous list, and how many days before its removal a version warns (default 90). */
export const ApiVersionsSettings = Schema.Struct({ versions: Schema.Array(ApiVersionSpec), warnDays: opt(Num) })
export type ApiVersionsSettings = typeof ApiVersionsSettings.Type

export const ApiVersionInfo = Schema.Struct({
  version: Str,
  removedAt: opt(Str),
  status: Schema.Literal("supported", "deprecated", "removed")
})

// ---- the operations -------------------------------------------------------------------------------------------

const Ids = Schema.Struct({ ids: Strings })
const Account = { accountId: Str }
const AppAndAccount = { clientId: Str, accountId: Str }

/** An operation of the admin API: its arguments, its result, and the one way it fails. */
const op = <const Tag extends string, Payload extends Schema.Struct.Fields | Schema.Schema.Any = typeof Schema.Void, Success extends Schema.Schema.Any = typeof Schema.Void>(
  tag: Tag,
  options: { readonly payload?: Payload; readonly success?: Success }
) => Rpc.make(tag, { ...options, error: EmulatorAdminError })

export class AdminRpcs extends RpcGroup.make(
  op("createApp", { payload: AppSpec, success: Schema.Struct({ appId: Str, clientId: Str }) }),
  op("createAccount", { payload: AccountSpec, success: Schema.Struct({ accountId: Str, name: Str, adminUserId: Str }) }),
  /**
   * Live records of a collection (a root field's name) in creation order, as GraphQL serves them with every field:
   * links as `{ id }`, custom fields, line items as their full list. `servedTo` (a client id): only what that app's
   * queries are given (records and line items the paging faults withhold left out).
   */
  op("listRecords", { payload: { ...Account, collection: Str, servedTo: opt(Str) }, success: Schema.Array(ListedRecord) }),
  /**
   * Every version a record had since the world was made, oldest first, each as listRecords lists it: the state before
   * its first change (`seeded`), then one per create, edit and line item edit, and its last state at `destroy`.
   * Empty for a record never changed.
   */
  op("recordVersions", {
    payload: { ...Account, collection: Str, id: Str },
    success: Schema.Array(Schema.Struct({ atMs: Num, kind: Schema.Literal("seeded", "create", "update", "destroy"), record: ListedRecord }))
  }),
  /** Seeded new records of the collection, created now. */
  op("createRecords", { payload: { ...Account, collection: Str, count: Num, seed: opt(Num) }, success: Ids }),
  /** Edits `count` pseudo-randomly chosen records (or `ids`): fields drawn again, `updatedAt` = now. */
  op("editRecords", { payload: { ...Account, collection: Str, ...RecordSelection.fields }, success: Ids }),
  op("deleteRecords", { payload: { ...Account, collection: Str, ...RecordSelection.fields }, success: Ids }),
  /** Adds, removes and edits line items of the chosen parents (their `updatedAt` = now). */
  op("editLineItems", { payload: { ...Account, collection: Str, ...RecordSelection.fields, add: opt(Num), remove: opt(Num), edit: opt(Num) }, success: Ids }),
  /**
   * Data that moves under the pager: before each GraphQL query of the account (or of every account), seeded
   * creates, edits and deletions of random records of `collections` (default jobs); `stop` ends it.
   */
  op("setChurn", { payload: ChurnOptions }),
  /** Every change churn made to the account, oldest first. */
  op("churnLog", { payload: Account, success: Schema.Array(ChangeInfo) }),
  /** The cursors connections issue: for one account, or the default of accounts that say nothing. */
  op("setCursorMode", { payload: { mode: Schema.Literal("offset", "keyset"), accountId: opt(Str) } }),
  /** `auto`: the authorization endpoint approves at once for `accountId` (or the `login_hint` query parameter). */
  op("setApproval", { payload: { mode: Schema.Literal("auto", "manual"), accountId: opt(Str) } }),
  /** Admin clicks Disconnect on the marketplace listing: all tokens die, APP_DISCONNECT is delivered. */
  op("marketplaceDisconnect", { payload: AppAndAccount }),
  op("automaticDisconnect", { payload: { ...AppAndAccount, reason: Schema.Literal("churn", "downgrade", "deactivation") } }),
  /** New secret returned; the old one fails at once; refresh tokens under it revoked; access tokens live on. */
  op("regenerateSecret", { payload: { clientId: Str }, success: Schema.Struct({ clientSecret: Str }) }),
  /** Scopes changed, then the account re-authorized elsewhere: the connector's refresh tokens die. */
  op("reauthorizeAfterScopeChange", { payload: { ...AppAndAccount, scopes: Strings } }),
  /** Developer-portal Test session: refresh tokens of that app and admin die; access tokens live on. */
  op("startSandboxSession", { payload: AppAndAccount, success: Schema.Struct({ accessToken: Str }) }),
  /** Per app and account when both given, else the defaults for new buckets. */
  op("setLimits", { payload: { ...Limits.fields, clientId: opt(Str), accountId: opt(Str) } }),
  op("setFaults", { payload: Faults }),
  op("setPagingFaults", { payload: PagingFaultOptions }),
  /** Moves the emulator's clock forward (codes, tokens and buckets all follow it). */
  op("advanceClock", { payload: { seconds: Num } }),
  /** Whether the token endpoint would accept this refresh token now. */
  op("isRefreshTokenValid", { payload: { clientId: Str, refreshToken: Str }, success: Schema.Boolean }),
  /** How many refresh tokens of (app, account) the token endpoint would accept now. */
  op("liveRefreshTokens", { payload: AppAndAccount, success: Num }),
  op("stats", { success: EmulatorStats }),
  op("resetStats", {}),
  /** Changes an app's callback URL, webhook URL, rotation or scopes; existing tokens are untouched. */
  op("updateApp", { payload: { clientId: Str, ...AppPatch.fields } }),
  /** Every webhook delivery so far, oldest first, with its status and attempt count. */
  op("webhookDeliveries", { success: Schema.Array(WebhookDeliveryInfo) }),
  /** Duplicates, delays, reordering and the account id encoding of every delivery from now on; replaces the previous settings. */
  op("setWebhookOptions", { payload: WebhookOptions }),
  /** The webhook subscriptions apps made with `webhookSubscriptionCreate`: of one app (and account), or all. */
  op("webhookSubscriptions", { payload: { clientId: opt(Str), accountId: opt(Str) }, success: Schema.Array(WebhookSubscriptionInfo) }),
  /** Sends the last event again with the same body (for idempotency tests); fails when none was sent yet. */
  op("redeliverWebhook", { success: WebhookDeliveryInfo }),
  /** Replaces the API versions served: each with its schema (SDL) and removal date (see src/emulator/ApiVersions.ts). */
  op("setApiVersions", { payload: ApiVersionsSettings }),
  /** The API versions and where each stands now (emulator clock): supported, deprecated (answers warn) or removed. */
  op("apiVersions", { success: Schema.Struct({ versions: Schema.Array(ApiVersionInfo), warnDays: Num }) }),
  /** The emulator's current time (host time + the offset moved by advanceClock). */
  op("clock", { success: Schema.Struct({ nowMs: Num, offsetSeconds: Num }) })
) {}

export type AdminRpc = RpcGroup.Rpcs<typeof AdminRpcs>

/** The admin API as its clients see it: in process, or over HTTP (where a failure on the way is an EmulatorAdminError too). */
export type EmulatorAdmin = RpcClient.RpcClient<AdminRpc>

import { Schema } from "effect"

/** The data the emulator's admin operations (EmulatorAdmin.ts) take and give. */

const Str = Schema.String
const Num = Schema.Number
const Strings = Schema.Array(Schema.String)
const opt = Schema.optional

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

import { Data, type Effect } from "effect"

/**
 * The emulator's control surface: the same operations in process (the test layer) and over HTTP
 * (`POST /__admin/<operation>` with a JSON body of the arguments, answered with JSON; enabled by `--admin`).
 * Tests, the demo and benchmarks drive the emulator only through this interface.
 */

export interface AppSpec {
  readonly clientId: string
  readonly clientSecret: string
  readonly redirectUri: string
  readonly webhookUrl?: string
  /**
   * Change topics (JOB_UPDATE, CLIENT_DESTROY, ... of WebHookTopicEnum) sent to `webhookUrl` for every connected
   * account, as if each had subscribed to them there (tests and benchmarks, without the subscription mutation).
   */
  readonly webhookTopics?: ReadonlyArray<string>
  /** Scopes shown at consent and enforced at the GraphQL endpoint; default: read_jobs, read_clients, ... (all reads) */
  readonly scopes?: ReadonlyArray<string>
  /** Refresh Token Rotation: a refresh returns a new refresh token and the old one stops working. Default false. */
  readonly rotation?: boolean
  readonly name?: string
  readonly author?: string
}

export interface AccountSpec {
  /** An EncodedId-like id; generated when absent. */
  readonly accountId?: string
  readonly name?: string
  /** Seeded jobs to create at once (deterministic for a given seed); the other collections scale with it. */
  readonly jobs?: number
  /** Records per collection (by root field name), over the sizes that scale with `jobs`. */
  readonly sizes?: Readonly<Record<string, number>>
  /** The cursors its connections issue: offsets (the default, as graphql-ruby's) or keyset cursors. */
  readonly cursorMode?: "offset" | "keyset"
  readonly seed?: number
}

/** A job exactly as the GraphQL endpoint serves it (every scalar field of the schema's `Job`). */
export interface JobRecord {
  readonly id: string
  readonly jobNumber: number
  readonly title: string | null
  readonly updatedAt: string
  readonly createdAt: string
  readonly [field: string]: unknown
}

export interface ChurnOptions {
  readonly accountId?: string
  /** Per query; a fraction is the chance of one more. */
  readonly creates?: number
  readonly edits?: number
  readonly deletes?: number
  readonly collections?: ReadonlyArray<string>
  /** Queries of each collection churned (default every one): a pass's first pages, not its closing listing. */
  readonly queries?: number
  readonly seed?: number
  readonly stop?: boolean
}

/** A change to a record, as churn logs it and webhooks report it. */
export interface ChangeInfo {
  readonly collection: string
  readonly kind: "create" | "update" | "destroy"
  readonly id: string
  readonly atMs: number
}

/** Which records an admin change touches: these ids, or `count` drawn from `seed`. */
export interface RecordSelection {
  readonly count?: number
  readonly ids?: ReadonlyArray<string>
  readonly seed?: number
}

export interface Limits {
  readonly maxPoints?: number
  readonly restoreRate?: number
  /** Request-rate guard: at most `requestLimit` requests per `requestWindowSeconds` per app and account (HTTP 429). */
  readonly requestLimit?: number
  readonly requestWindowSeconds?: number
  /** Largest `first`/`last` accepted on a connection. */
  readonly maxPageSize?: number
}

export interface Faults {
  /** Probability of an HTTP 5xx answer (0..1), per GraphQL or token request. */
  readonly errorRate?: number
  /** Probability the connection is destroyed without an answer. */
  readonly dropRate?: number
  /** Probability the body is cut short (invalid JSON) with a 200 status. */
  readonly truncateRate?: number
  /** Probability of an added delay of `latencyMs`. */
  readonly latencyRate?: number
  readonly latencyMs?: number
  /** Seed of the fault draw, for repeatable runs. */
  readonly seed?: number
}

export interface EmulatorStats {
  readonly tokenRequests: { readonly authorization_code: number; readonly refresh_token: number; readonly failed: number }
  readonly graphqlRequests: number
  readonly throttled: number
  readonly rateLimited: number
  readonly faultsInjected: { readonly error: number; readonly drop: number; readonly truncate: number; readonly latency: number }
  /** Successful refresh grants per account id. */
  readonly refreshesByAccount: Readonly<Record<string, number>>
  /** Query cost points charged (actual cost deducted from the bucket) per account id. */
  readonly costPointsByAccount: Readonly<Record<string, number>>
}

/** One webhook event delivery (a redelivery or a duplicate is its own entry, pointing at the original). */
export interface WebhookDeliveryInfo {
  readonly id: string
  readonly topic: string
  readonly appId: string
  /** The account's GraphQL id (the body spells it as `accountIdEncoding` says). */
  readonly accountId: string
  /** The record the event is about (the account itself for APP_DISCONNECT). */
  readonly itemId: string
  readonly url: string
  /** The raw body as sent (the HMAC is over these bytes). */
  readonly body: string
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly lastStatus?: number
  readonly lastError?: string
  readonly redeliveryOf?: string
  /** Milliseconds from the last attempt's request to the receiver's answer (measured at the sender). */
  readonly answerMs?: number
}

/** How change events are delivered (`setWebhookOptions`; each call replaces the previous settings). */
export interface WebhookOptions {
  /** Chance (0..1) that an event is delivered a second time, byte for byte (the service sends at least once). */
  readonly duplicateRate?: number
  /** Milliseconds each delivery waits before its first attempt: exactly that, or a uniform draw up to it with `delayRandom`. */
  readonly delayMs?: number
  readonly delayRandom?: boolean
  /** Deliveries are held this long (ms) and then started in a shuffled order; 0 (default) sends each at once. */
  readonly reorderWindowMs?: number
  /** How `accountId` is spelled: the account's GraphQL EncodedId (default), or the base64 of its number as the real service's webhooks do. */
  readonly accountIdEncoding?: "graphql" | "numeric"
  /** Seed of the duplicate, delay and shuffle draws. */
  readonly seed?: number
}

/** A webhook subscription of an app for an account (`webhookSubscriptionCreate`). */
export interface WebhookSubscriptionInfo {
  readonly id: string
  readonly appId: string
  readonly accountId: string
  readonly topic: string
  readonly url: string
  readonly createdAt: string
}

/** Settings of an app that can change without touching its tokens (a Draft-style edit). */
export interface AppPatch {
  readonly redirectUri?: string
  /** null removes the webhook URL. */
  readonly webhookUrl?: string | null
  readonly rotation?: boolean
  readonly scopes?: ReadonlyArray<string>
  /** Replaces the app-level change topics (see AppSpec.webhookTopics); [] stops them. */
  readonly webhookTopics?: ReadonlyArray<string>
}

export interface EmulatorAdmin {
  readonly baseUrl: string
  readonly createApp: (spec: AppSpec) => Effect.Effect<{ readonly appId: string; readonly clientId: string }, EmulatorAdminError>
  readonly createAccount: (spec: AccountSpec) => Effect.Effect<{ readonly accountId: string; readonly name: string; readonly adminUserId: string }, EmulatorAdminError>
  readonly seedJobs: (accountId: string, count: number, seed?: number) => Effect.Effect<{ readonly total: number }, EmulatorAdminError>
  /** Live (not deleted) jobs of the account in job-number (= creation) order, with exactly the values GraphQL serves. */
  readonly listJobs: (accountId: string) => Effect.Effect<ReadonlyArray<JobRecord>, EmulatorAdminError>
  /** Edits `count` pseudo-randomly chosen jobs (or `ids`): new title and other fields, `updatedAt` = now. */
  readonly editJobs: (accountId: string, options: { readonly count?: number; readonly ids?: ReadonlyArray<string>; readonly seed?: number }) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  readonly deleteJobs: (accountId: string, options: { readonly count?: number; readonly ids?: ReadonlyArray<string>; readonly seed?: number }) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  /** Live records of a collection (a root field's name) in creation order, as GraphQL serves them with every field: links as `{ id }`, custom fields, line items as their full list. */
  readonly listRecords: (accountId: string, collection: string) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, EmulatorAdminError>
  /** Seeded new records of the collection, created now. */
  readonly createRecords: (accountId: string, collection: string, count: number, seed?: number) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  /** Edits `count` pseudo-randomly chosen records (or `ids`): fields drawn again, `updatedAt` = now. */
  readonly editRecords: (accountId: string, collection: string, selection: RecordSelection) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  readonly deleteRecords: (accountId: string, collection: string, selection: RecordSelection) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  /** Adds, removes and edits line items of the chosen parents (their `updatedAt` = now). */
  readonly editLineItems: (
    accountId: string,
    collection: string,
    selection: RecordSelection & { readonly add?: number; readonly remove?: number; readonly edit?: number }
  ) => Effect.Effect<{ readonly ids: ReadonlyArray<string> }, EmulatorAdminError>
  /**
   * Data that moves under the pager: before each GraphQL query of the account (or of every account), seeded
   * creates, edits and deletions of random records of `collections` (default jobs); `stop` ends it.
   */
  readonly setChurn: (options: ChurnOptions) => Effect.Effect<void, EmulatorAdminError>
  /** Every change churn made to the account, oldest first. */
  readonly churnLog: (accountId: string) => Effect.Effect<ReadonlyArray<ChangeInfo>, EmulatorAdminError>
  /** The cursors connections issue: for one account, or the default of accounts that say nothing. */
  readonly setCursorMode: (mode: "offset" | "keyset", accountId?: string) => Effect.Effect<void, EmulatorAdminError>
  /** `auto`: the authorization endpoint approves at once for `accountId` (or the `login_hint` query parameter). */
  readonly setApproval: (options: { readonly mode: "auto" | "manual"; readonly accountId?: string }) => Effect.Effect<void, EmulatorAdminError>
  /** Admin clicks Disconnect on the marketplace listing: all tokens die, APP_DISCONNECT is delivered. */
  readonly marketplaceDisconnect: (clientId: string, accountId: string) => Effect.Effect<void, EmulatorAdminError>
  readonly automaticDisconnect: (clientId: string, accountId: string, reason: "churn" | "downgrade" | "deactivation") => Effect.Effect<void, EmulatorAdminError>
  /** New secret returned; the old one fails at once; refresh tokens under it revoked; access tokens live on. */
  readonly regenerateSecret: (clientId: string) => Effect.Effect<{ readonly clientSecret: string }, EmulatorAdminError>
  /** Scopes changed, then the account re-authorized elsewhere: the connector's refresh tokens die. */
  readonly reauthorizeAfterScopeChange: (clientId: string, accountId: string, scopes: ReadonlyArray<string>) => Effect.Effect<void, EmulatorAdminError>
  /** Developer-portal Test session: refresh tokens of that app and admin die; access tokens live on. */
  readonly startSandboxSession: (clientId: string, accountId: string) => Effect.Effect<{ readonly accessToken: string }, EmulatorAdminError>
  /** Per app and account when both given, else the defaults for new buckets. */
  readonly setLimits: (limits: Limits & { readonly clientId?: string; readonly accountId?: string }) => Effect.Effect<void, EmulatorAdminError>
  readonly setFaults: (faults: Faults) => Effect.Effect<void, EmulatorAdminError>
  /** Moves the emulator's clock forward (codes, tokens and buckets all follow it). */
  readonly advanceClock: (seconds: number) => Effect.Effect<void, EmulatorAdminError>
  /** Whether the token endpoint would accept this refresh token now. */
  readonly isRefreshTokenValid: (clientId: string, refreshToken: string) => Effect.Effect<boolean, EmulatorAdminError>
  /** How many refresh tokens of (app, account) the token endpoint would accept now. */
  readonly liveRefreshTokens: (clientId: string, accountId: string) => Effect.Effect<number, EmulatorAdminError>
  readonly stats: () => Effect.Effect<EmulatorStats, EmulatorAdminError>
  readonly resetStats: () => Effect.Effect<void, EmulatorAdminError>
  /** Changes an app's callback URL, webhook URL, rotation or scopes; existing tokens are untouched. */
  readonly updateApp: (clientId: string, patch: AppPatch) => Effect.Effect<void, EmulatorAdminError>
  /** Every webhook delivery so far, oldest first, with its status and attempt count. */
  readonly webhookDeliveries: () => Effect.Effect<ReadonlyArray<WebhookDeliveryInfo>, EmulatorAdminError>
  /** Duplicates, delays, reordering and the account id encoding of every delivery from now on; replaces the previous settings. */
  readonly setWebhookOptions: (options: WebhookOptions) => Effect.Effect<void, EmulatorAdminError>
  /** The webhook subscriptions apps made with `webhookSubscriptionCreate`: of one app (and account), or all. */
  readonly webhookSubscriptions: (filter: { readonly clientId?: string; readonly accountId?: string }) => Effect.Effect<ReadonlyArray<WebhookSubscriptionInfo>, EmulatorAdminError>
  /** Sends the last event again with the same body (for idempotency tests); fails when none was sent yet. */
  readonly redeliverWebhook: () => Effect.Effect<WebhookDeliveryInfo, EmulatorAdminError>
  /** The emulator's current time (host time + the offset moved by advanceClock). */
  readonly clock: () => Effect.Effect<{ readonly nowMs: number; readonly offsetSeconds: number }, EmulatorAdminError>
}

export class EmulatorAdminError extends Data.TaggedError("EmulatorAdminError")<{
  readonly operation: string
  readonly reason: string
}> {
  override get message() {
    return `emulator admin ${this.operation}: ${this.reason}`
  }
}

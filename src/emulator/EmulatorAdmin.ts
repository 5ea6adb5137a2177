import { Rpc, type RpcClient, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { AccountSpec, ApiVersionInfo, ApiVersionsSettings, AppPatch, AppSpec, ChangeInfo, ChurnOptions, EmulatorStats, Faults, Limits, ListedRecord, PagingFaultOptions, RecordSelection, WebhookDeliveryInfo, WebhookOptions, WebhookSubscriptionInfo } from "./EmulatorAdminData.js"

/**
 * The emulator's control surface, declared once: an @effect/rpc group whose Schemas are the operations' arguments and
 * results. Admin.ts implements it; the in-process client (Emulator.make's `admin`) and the HTTP one
 * (EmulatorAdminClient, `POST /__admin` when the emulator runs with `--admin`) both come from this declaration.
 * Tests, the demo and benchmarks drive the emulator only through it. The data its operations take and give is
 * EmulatorAdminData.ts (exported from here too).
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

export * from "./EmulatorAdminData.js"

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
   * queries are given (records and line items the paging faults withhold left out). `ids`: only those of these ids
   * that are live, in creation order (a check of a few records of a large account lists those, not every record).
   */
  op("listRecords", { payload: { ...Account, collection: Str, servedTo: opt(Str), ids: opt(Strings) }, success: Schema.Array(ListedRecord) }),
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

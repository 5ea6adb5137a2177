import { Data, Duration, Effect, Schedule } from "effect"
import type * as Fiber from "effect/Fiber"
import * as crypto from "node:crypto"
import type { Account, App } from "./AppsAndAccounts.js"
import type { WebhookDeliveryInfo, WebhookOptions } from "./EmulatorAdmin.js"
import { AdminRejected } from "./errors.js"
import { decodeId, isoSeconds } from "./Ids.js"
import { sequence } from "./Prng.js"
import type { Change } from "./data/World.js"
import { postWebhook } from "./webhookPost.js"
import { topicOf } from "./webhookTopics.js"

/**
 * Webhook delivery: POST of `{"data":{"webHookEvent":{topic, appId, accountId, itemId, occuredAt}}}` signed with
 * `X-Service-Hmac-SHA256` = base64(HMAC-SHA256(raw body, client secret)), in the background, retried with a
 * bounded, jittered exponential backoff while the receiver fails or cannot be reached. Change events (JOB_UPDATE,
 * CLIENT_DESTROY, ...) go to every subscriber of the topic; `setOptions` adds duplicates, delays and reordering and
 * picks how the account id is spelled, as the real service may.
 */

export const SIGNATURE_HEADER = "X-Service-Hmac-SHA256"

export interface WebhookRetryOptions {
  /** Total attempts, first one included (default 6). */
  readonly attempts?: number
  /** First backoff delay (default 200 ms); each next one doubles, jittered. */
  readonly baseDelayMs?: number
  /** Per-attempt timeout (default 5 s). */
  readonly timeoutMs?: number
}

export class WebhookAttemptFailed extends Data.TaggedError("WebhookAttemptFailed")<{
  readonly url: string
  readonly reason: string
}> {}

export const signWebhook = (rawBody: string, secret: string): string => crypto.createHmac("sha256", secret).update(rawBody).digest("base64")

/** A delivery as the emulator keeps it: the admin view, with its progress fields writable. */
type Delivery = Omit<WebhookDeliveryInfo, "status" | "attempts" | "lastStatus" | "lastError" | "answerMs"> & {
  status: WebhookDeliveryInfo["status"]
  attempts: number
  lastStatus: number | undefined
  lastError: string | undefined
  answerMs: number | undefined
}

type DeliveryBase = Pick<Delivery, "topic" | "appId" | "accountId" | "itemId" | "url" | "body" | "redeliveryOf">

/** Where a change event goes: an app's subscription URL (or its app-level webhook URL). */
export interface WebhookTarget {
  readonly app: App
  readonly url: string
}

export type RunFork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>

const defaultOptions: Required<Omit<WebhookOptions, "seed">> = { duplicateRate: 0, delayMs: 0, delayRandom: false, reorderWindowMs: 0, accountIdEncoding: "graphql" }

/** The options checked: every rate and time in range, named when not. */
const checkOptions = (options: WebhookOptions): WebhookOptions => {
  const bad = (name: string, expected: string, got: unknown) =>
    new AdminRejected({ reason: `setWebhookOptions: ${name} must be ${expected}, got ${JSON.stringify(got)}` })
  if (options.duplicateRate !== undefined && !(options.duplicateRate >= 0 && options.duplicateRate <= 1)) throw bad("duplicateRate", "a number from 0 to 1", options.duplicateRate)
  for (const name of ["delayMs", "reorderWindowMs"] as const) {
    const v = options[name]
    if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 600_000)) throw bad(name, "a number of milliseconds from 0 to 600000", v)
  }
  if (options.accountIdEncoding !== undefined && options.accountIdEncoding !== "graphql" && options.accountIdEncoding !== "numeric") {
    throw bad("accountIdEncoding", `"graphql" or "numeric"`, options.accountIdEncoding)
  }
  return options
}

/** The account id as a delivery spells it: the GraphQL EncodedId, or the base64 of the account's number. */
export const webhookAccountId = (accountId: string, encoding: "graphql" | "numeric"): string => {
  if (encoding === "graphql") return accountId
  const n = decodeId("Account", accountId)
  return n === undefined ? accountId : Buffer.from(String(n)).toString("base64")
}

export class Webhooks {
  private readonly deliveries: Array<Delivery> = []
  private readonly retry: Schedule.Schedule<unknown, unknown>
  private readonly timeout: Duration.Duration
  private options: Required<Omit<WebhookOptions, "seed">> = defaultOptions
  private draw: () => number = sequence(1)
  /** Deliveries held for the reorder window, started together in a shuffled order. */
  private held: Array<() => void> = []

  constructor(
    private readonly runFork: RunFork,
    options: WebhookRetryOptions = {}
  ) {
    const attempts = Math.max(1, options.attempts ?? 6)
    // named: the webhook retry policy (bounded, jittered exponential)
    this.retry = Schedule.exponential(Duration.millis(options.baseDelayMs ?? 200)).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(attempts - 1))
    )
    this.timeout = Duration.millis(options.timeoutMs ?? 5000)
  }

  /** Replaces the delivery options (duplicates, delay, reordering, account id encoding); `{}` restores the defaults. */
  setOptions(options: WebhookOptions): void {
    const { seed, ...rest } = checkOptions(options)
    this.options = { ...defaultOptions, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) }
    this.draw = sequence(seed ?? 1)
  }

  /** Queues the event for the app's webhook URL (nothing is sent when the app has none). */
  emit(app: App, account: Account, topic: "APP_DISCONNECT", occurredAtMs: number): WebhookDeliveryInfo | undefined {
    if (!app.webhookUrl) return undefined
    const accountId = webhookAccountId(account.accountId, this.options.accountIdEncoding)
    return this.send(app, { topic, appId: app.appId, accountId: account.accountId, itemId: account.accountId, url: app.webhookUrl, body: eventBody(topic, app, accountId, accountId, occurredAtMs), redeliveryOf: undefined })
  }

  /**
   * A record created, updated or destroyed: its topic (JOB_UPDATE, ...) to every target `targetsOf` names for the
   * account (the connected apps subscribed to it); none when the service has no topic for the change.
   */
  recordChanged(targetsOf: (account: Account, topic: string) => ReadonlyArray<WebhookTarget>, account: Account, change: Change): void {
    const topic = topicOf(account.world.records(change.collection).def.nodeType, change.kind)
    if (topic === undefined) return
    const accountId = webhookAccountId(account.accountId, this.options.accountIdEncoding)
    for (const { app, url } of targetsOf(account, topic)) {
      this.send(app, { topic, appId: app.appId, accountId: account.accountId, itemId: change.id, url, body: eventBody(topic, app, accountId, change.id, change.atMs), redeliveryOf: undefined })
    }
  }

  /** Sends the last event again, byte for byte (receivers must be idempotent), signed with the current secret. */
  redeliverLast(appFor: (appId: string) => App | undefined): WebhookDeliveryInfo | undefined {
    const last = [...this.deliveries].reverse().find((d) => d.redeliveryOf === undefined)
    if (!last) return undefined
    const app = appFor(last.appId)
    if (!app) return undefined
    const again = this.record({ ...last, redeliveryOf: last.id })
    this.launch(app, again, 0)
    return info(again)
  }

  list(): ReadonlyArray<WebhookDeliveryInfo> {
    return this.deliveries.map(info)
  }

  /** One event: its delivery, maybe a duplicate of it, each after its delay, held for the reorder window if one is set. */
  private send(app: App, base: DeliveryBase): WebhookDeliveryInfo {
    const { duplicateRate, reorderWindowMs } = this.options
    const first = this.record(base)
    const all = [first]
    if (duplicateRate > 0 && this.draw() < duplicateRate) all.push(this.record({ ...base, redeliveryOf: first.id }))
    for (const delivery of all) {
      const delayMs = this.delay()
      if (reorderWindowMs > 0) this.hold(() => this.launch(app, delivery, delayMs), reorderWindowMs)
      else this.launch(app, delivery, delayMs)
    }
    return info(first)
  }

  private delay(): number {
    const { delayMs, delayRandom } = this.options
    return delayMs === 0 ? 0 : delayRandom ? Math.floor(this.draw() * (delayMs + 1)) : delayMs
  }

  private hold(start: () => void, windowMs: number): void {
    this.held.push(start)
    if (this.held.length > 1) return
    this.runFork(
      Effect.sleep(Duration.millis(windowMs)).pipe(
        Effect.andThen(
          Effect.sync(() => {
            const batch = this.held
            this.held = []
            // Fisher-Yates with the seeded draw: the same seed, the same order
            for (let i = batch.length - 1; i > 0; i--) {
              const j = Math.floor(this.draw() * (i + 1))
              ;[batch[i], batch[j]] = [batch[j]!, batch[i]!]
            }
            for (const start of batch) start()
          })
        )
      )
    )
  }

  private record(base: DeliveryBase): Delivery {
    const delivery: Delivery = { ...base, id: `wh_${this.deliveries.length + 1}`, status: "pending", attempts: 0, lastStatus: undefined, lastError: undefined, answerMs: undefined }
    this.deliveries.push(delivery)
    return delivery
  }

  private launch(app: App, delivery: Delivery, delayMs: number): void {
    const signature = signWebhook(delivery.body, app.clientSecret)
    const attempt = Effect.suspend(() => {
      delivery.attempts++
      return Effect.tryPromise({
        try: () => postWebhook(delivery.url, { "content-type": "application/json", [SIGNATURE_HEADER]: signature }, delivery.body, Duration.toMillis(this.timeout)),
        catch: (e) => new WebhookAttemptFailed({ url: delivery.url, reason: e instanceof Error ? e.message : String(e) })
      }).pipe(
        // the attempt's timeout runs on the sender's thread from the request's start (not from the hand-over: the
        // thread's own start is not the receiver's time); this bound is for a thread that stopped answering at all
        Effect.timeoutFail({
          duration: Duration.sum(this.timeout, Duration.seconds(30)),
          onTimeout: () => new WebhookAttemptFailed({ url: delivery.url, reason: `the sender's thread gave no result within ${Duration.format(this.timeout)} and 30 s` })
        }),
        Effect.flatMap(({ status, answerMs }) => {
          delivery.lastStatus = status
          delivery.answerMs = answerMs
          return status >= 200 && status < 300 ? Effect.void : Effect.fail(new WebhookAttemptFailed({ url: delivery.url, reason: `receiver answered HTTP ${status}` }))
        }),
        Effect.tapError((e) => Effect.sync(() => (delivery.lastError = e.reason)))
      )
    })
    this.runFork(
      attempt.pipe(
        Effect.retry(this.retry),
        Effect.delay(Duration.millis(delayMs)),
        Effect.matchEffect({
          onSuccess: () => Effect.sync(() => (delivery.status = "delivered")),
          onFailure: (e) =>
            Effect.sync(() => (delivery.status = "failed")).pipe(
              Effect.zipRight(Effect.logWarning(`webhook ${delivery.topic} to ${delivery.url} failed after ${delivery.attempts} attempts: ${e.reason}`))
            )
        })
      )
    )
  }
}

const eventBody = (topic: string, app: App, accountId: string, itemId: string, occurredAtMs: number): string =>
  JSON.stringify({ data: { webHookEvent: { topic, appId: app.appId, accountId, itemId, occuredAt: isoSeconds(occurredAtMs) } } })

/** A snapshot for the admin API (the record itself goes on changing while it is retried). */
const info = (d: Delivery): WebhookDeliveryInfo => {
  const { answerMs, lastStatus, lastError, redeliveryOf, ...rest } = d
  return {
    ...rest,
    ...(lastStatus !== undefined ? { lastStatus } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
    ...(redeliveryOf !== undefined ? { redeliveryOf } : {}),
    ...(answerMs !== undefined ? { answerMs } : {})
  }
}

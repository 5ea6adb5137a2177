import { Data, Duration, Effect, Schedule } from "effect"
import type * as Fiber from "effect/Fiber"
import * as crypto from "node:crypto"
import type { WebhookDeliveryInfo } from "./EmulatorAdmin.js"
import { isoSeconds } from "./Ids.js"
import type { Change } from "./data/World.js"
import type { Account, App } from "./Registry.js"

/**
 * Webhook delivery: POST of `{"data":{"webHookEvent":{topic, appId, accountId, itemId, occuredAt}}}` signed with
 * `X-Service-Hmac-SHA256` = base64(HMAC-SHA256(raw body, client secret)), in the background, retried with a
 * bounded, jittered exponential backoff while the receiver fails or cannot be reached.
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
type Delivery = Omit<WebhookDeliveryInfo, "status" | "attempts" | "lastStatus" | "lastError"> & {
  status: WebhookDeliveryInfo["status"]
  attempts: number
  lastStatus: number | undefined
  lastError: string | undefined
}

export type RunFork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>

export class Webhooks {
  private readonly deliveries: Array<Delivery> = []
  private readonly retry: Schedule.Schedule<unknown, unknown>
  private readonly timeout: Duration.Duration

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

  /** Queues the event for the app's webhook URL (nothing is sent when the app has none). */
  emit(app: App, account: Account, topic: "APP_DISCONNECT", occurredAtMs: number): WebhookDeliveryInfo | undefined {
    if (!app.webhookUrl) return undefined
    const body = JSON.stringify({
      data: { webHookEvent: { topic, appId: app.appId, accountId: account.accountId, itemId: account.accountId, occuredAt: isoSeconds(occurredAtMs) } }
    })
    return this.start(app, { topic, appId: app.appId, accountId: account.accountId, url: app.webhookUrl, body, redeliveryOf: undefined })
  }

  /** A record created, updated or destroyed: its topic to the app subscriptions that want it (none yet). */
  recordChanged(_registry: unknown, _account: Account, _change: Change): void {}

  /** Sends the last event again, byte for byte (receivers must be idempotent), signed with the current secret. */
  redeliverLast(appFor: (appId: string) => App | undefined): WebhookDeliveryInfo | undefined {
    const last = [...this.deliveries].reverse().find((d) => d.redeliveryOf === undefined)
    if (!last) return undefined
    const app = appFor(last.appId)
    if (!app) return undefined
    return this.start(app, { topic: last.topic, appId: last.appId, accountId: last.accountId, url: last.url, body: last.body, redeliveryOf: last.id })
  }

  list(): ReadonlyArray<WebhookDeliveryInfo> {
    return this.deliveries.map(info)
  }

  private start(app: App, base: Pick<Delivery, "topic" | "appId" | "accountId" | "url" | "body" | "redeliveryOf">): WebhookDeliveryInfo {
    const delivery: Delivery = { ...base, id: `wh_${this.deliveries.length + 1}`, status: "pending", attempts: 0, lastStatus: undefined, lastError: undefined }
    this.deliveries.push(delivery)
    const signature = signWebhook(delivery.body, app.clientSecret)
    const attempt = Effect.suspend(() => {
      delivery.attempts++
      return Effect.tryPromise({
        try: (signal) =>
          fetch(delivery.url, {
            method: "POST",
            headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signature },
            body: delivery.body,
            signal
          }),
        catch: (e) => new WebhookAttemptFailed({ url: delivery.url, reason: e instanceof Error ? e.message : String(e) })
      }).pipe(
        Effect.timeoutFail({
          duration: this.timeout,
          onTimeout: () => new WebhookAttemptFailed({ url: delivery.url, reason: `no answer within ${Duration.format(this.timeout)}` })
        }),
        Effect.flatMap((res) => {
          delivery.lastStatus = res.status
          void res.body?.cancel().catch(() => undefined)
          return res.ok ? Effect.void : Effect.fail(new WebhookAttemptFailed({ url: delivery.url, reason: `receiver answered HTTP ${res.status}` }))
        }),
        Effect.tapError((e) => Effect.sync(() => (delivery.lastError = e.reason)))
      )
    })
    this.runFork(
      attempt.pipe(
        Effect.retry(this.retry),
        Effect.matchEffect({
          onSuccess: () => Effect.sync(() => (delivery.status = "delivered")),
          onFailure: (e) =>
            Effect.sync(() => (delivery.status = "failed")).pipe(
              Effect.zipRight(Effect.logWarning(`webhook ${delivery.topic} to ${delivery.url} failed after ${delivery.attempts} attempts: ${e.reason}`))
            )
        })
      )
    )
    return info(delivery)
  }
}

/** A snapshot for the admin API (the record itself goes on changing while it is retried). */
const info = (d: Delivery): WebhookDeliveryInfo => ({ ...d })

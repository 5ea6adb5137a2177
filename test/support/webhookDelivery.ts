import { Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import type { ChildProcess } from "node:child_process"
import * as http from "node:http"
import type { Env } from "./config.js"

export interface Delivery {
  readonly topic: string
  /** As the service spells it in a delivery (see webhookAccountIdOf). */
  readonly accountId: string
  readonly itemId: string
  /** The service's time of the change (its field's spelling). */
  readonly occuredAt: string
}

/**
 * One POST on a connection of its own (`Connection: close`): a kept-alive connection that serve closes as idle just as
 * a delivery is sent on it loses the delivery ("other side closed") before serve sees it.
 */
const postOnce = (url: string, headers: Record<string, string>, body: string) =>
  new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, agent: false }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(body)
  })

/** A webhook delivery to serve's /webhooks as the service signs it: HMAC-SHA256 of the raw body with the client secret, base64. */
export const deliverWebhook = (base: string, env: Env, event: Delivery) =>
  Effect.promise(() => {
    const body = JSON.stringify({ data: { webHookEvent: { appId: env.SERVICE_CLIENT_ID!, ...event } } })
    const signature = crypto.createHmac("sha256", env.SERVICE_CLIENT_SECRET!).update(body).digest("base64")
    return postOnce(`${base}/webhooks`, { "content-type": "application/json", "x-service-hmac-sha256": signature }, body)
  })

/** The account id as a webhook delivery carries it (the base64 of the account's number) for the emulator's global id. */
export const webhookAccountIdOf = (accountId: string) => Buffer.from(/(\d+)$/.exec(Buffer.from(accountId, "base64").toString())![1]!).toString("base64")

/**
 * Until serve's /healthz answers 200: at most 90 s (a loaded machine's start of serve).
 * Given serve's process, a serve that exited fails it at once, naming its exit code or signal.
 */
export const waitForHealth = (base: string, serve?: ChildProcess) =>
  Effect.gen(function* () {
    if (serve !== undefined && (serve.exitCode !== null || serve.signalCode !== null)) {
      return yield* Effect.die(new Error(`serve exited (${serve.exitCode ?? serve.signalCode}) before ${base}/healthz answered`))
    }
    const answer = yield* Effect.tryPromise(() => fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) }))
    if (!answer.ok) return yield* Effect.fail(new Error(`${base}/healthz answered HTTP ${answer.status}`))
  }).pipe(
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("90 seconds"))),
    Effect.mapError((e) => new Error(`serve at ${base} not healthy within 90 s: ${e instanceof Error ? e.message : String(e)}`)),
    Effect.orDie
  )

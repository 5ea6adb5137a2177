import { Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import type { Env } from "./config.js"

export interface Delivery {
  readonly topic: string
  /** As the service spells it in a delivery (see webhookAccountIdOf). */
  readonly accountId: string
  readonly itemId: string
  /** The service's time of the change (its field's spelling). */
  readonly occuredAt: string
}

/** A webhook delivery to serve's /webhooks as the service signs it: HMAC-SHA256 of the raw body with the client secret, base64. */
export const deliverWebhook = (base: string, env: Env, event: Delivery) =>
  Effect.promise(async () => {
    const body = JSON.stringify({ data: { webHookEvent: { appId: env.SERVICE_CLIENT_ID!, ...event } } })
    const signature = crypto.createHmac("sha256", env.SERVICE_CLIENT_SECRET!).update(body).digest("base64")
    const response = await fetch(`${base}/webhooks`, { method: "POST", headers: { "content-type": "application/json", "x-service-hmac-sha256": signature }, body })
    return { status: response.status, body: await response.text() }
  })

/** The account id as a webhook delivery carries it (the base64 of the account's number) for the emulator's global id. */
export const webhookAccountIdOf = (accountId: string) => Buffer.from(/(\d+)$/.exec(Buffer.from(accountId, "base64").toString())![1]!).toString("base64")

/** Until serve's /healthz answers (at most 30 s). */
export const waitForHealth = (base: string) =>
  Effect.promise(() => fetch(`${base}/healthz`)).pipe(
    Effect.catchAllDefect((e) => Effect.fail(e)),
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.intersect(Schedule.recurs(150)))),
    Effect.orDie
  )

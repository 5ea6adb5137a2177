import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Data, Effect, Either, Layer, Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import { Connections } from "./Connections.js"
import { OAuthClient } from "./OAuthClient.js"

export const signatureHeader = "x-service-hmac-sha256"

/** Bad or missing `X-Service-Hmac-SHA256`: answered 401, nothing changes. */
export class WebhookSignatureInvalid extends Data.TaggedError("WebhookSignatureInvalid")<{ readonly reason: string }> {
  override get message() {
    return `webhook rejected: ${this.reason}`
  }
}

/** Signed, but not the payload shape we know: answered 400, nothing changes. */
export class WebhookMalformed extends Data.TaggedError("WebhookMalformed")<{ readonly reason: string }> {
  override get message() {
    return `webhook body is malformed: ${this.reason}`
  }
}

const WebHookEvent = Schema.Struct({
  topic: Schema.String,
  appId: Schema.String,
  accountId: Schema.String,
  itemId: Schema.String,
  occuredAt: Schema.String
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Schema.Struct({ data: Schema.Struct({ webHookEvent: WebHookEvent }) })))

export type WebhookOutcome =
  | { readonly _tag: "Applied"; readonly topic: string; readonly accountId: string; readonly changed: boolean }
  | { readonly _tag: "Duplicate"; readonly topic: string; readonly accountId: string }
  | { readonly _tag: "Ignored"; readonly topic: string; readonly accountId: string }

/** base64(HMAC-SHA256(raw body, client secret)), compared in constant time. */
export const verifySignature = (
  secret: Redacted.Redacted<string>,
  body: Uint8Array,
  signature: string | undefined
): Either.Either<void, WebhookSignatureInvalid> => {
  if (signature === undefined || signature.length === 0) return Either.left(new WebhookSignatureInvalid({ reason: "no signature header" }))
  const expected = crypto.createHmac("sha256", Redacted.value(secret)).update(body).digest()
  const given = Buffer.from(signature.trim(), "base64")
  return given.length === expected.length && crypto.timingSafeEqual(given, expected)
    ? Either.void
    : Either.left(new WebhookSignatureInvalid({ reason: "signature does not match the body" }))
}

/** APP_DISCONNECT and any other webhook: verified, recorded once, applied once. */
export class DisconnectEvents extends Context.Tag("account-sync/DisconnectEvents")<
  DisconnectEvents,
  {
    readonly receive: (
      body: Uint8Array,
      signature: string | undefined
    ) => Effect.Effect<WebhookOutcome, WebhookSignatureInvalid | WebhookMalformed | SqlError.SqlError>
  }
>() {}

export const DisconnectEventsLive = Layer.effect(
  DisconnectEvents,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* OAuthClient
    const connections = yield* Connections

    const receive = (body: Uint8Array, signature: string | undefined) =>
      Effect.gen(function* () {
        yield* verifySignature(settings.clientSecret, body, signature)
        const payload = decodePayload(Buffer.from(body).toString("utf8"))
        if (Either.isLeft(payload)) {
          return yield* new WebhookMalformed({ reason: "expected {data:{webHookEvent:{topic,appId,accountId,itemId,occuredAt}}}" })
        }
        const event = payload.right.data.webHookEvent
        const occurredMs = Date.parse(event.occuredAt)
        if (Number.isNaN(occurredMs)) return yield* new WebhookMalformed({ reason: "occuredAt is not an ISO 8601 time" })
        const eventId = crypto
          .createHash("sha256")
          .update([event.topic, event.appId, event.accountId, event.itemId, event.occuredAt].join("|"))
          .digest("hex")
        const received = new Date(yield* Clock.currentTimeMillis)
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            const inserted = yield* sql`
              INSERT INTO webhook_events (event_id, topic, account_id, occurred_at, received_at)
              VALUES (${eventId}, ${event.topic}, ${event.accountId}, ${new Date(occurredMs)}, ${received})
              ON CONFLICT (event_id) DO NOTHING RETURNING event_id`
            const base = { topic: event.topic, accountId: event.accountId }
            if (inserted.length === 0) return { _tag: "Duplicate" as const, ...base }
            if (event.topic !== "APP_DISCONNECT") return { _tag: "Ignored" as const, ...base }
            const changed = yield* connections.markDisconnected(event.accountId, `APP_DISCONNECT webhook (${event.occuredAt})`, {
              occurredAt: new Date(occurredMs)
            })
            return { _tag: "Applied" as const, ...base, changed }
          })
        )
      }).pipe(
        Effect.tap((outcome) =>
          Effect.logInfo(
            outcome._tag === "Applied"
              ? outcome.changed
                ? "APP_DISCONNECT: tokens deleted, connection disconnected"
                : "APP_DISCONNECT: no connection older than the event; nothing to change"
              : outcome._tag === "Duplicate"
                ? `webhook ${outcome.topic} already received; acknowledged again`
                : `webhook topic ${outcome.topic} is not handled; acknowledged`
          ).pipe(Effect.annotateLogs({ accountId: outcome.accountId, topic: outcome.topic }))
        ),
        Effect.tapError((e) => (e._tag === "SqlError" ? Effect.logError("webhook could not be stored", e) : Effect.logWarning(e.message)))
      )

    return { receive }
  })
)

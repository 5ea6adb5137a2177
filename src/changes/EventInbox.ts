import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Effect, Either, Layer, Metric, Option, Queue, Ref, Schema } from "effect"
import * as crypto from "node:crypto"
import { webhookTopicNames } from "../api/serviceSchema.js"
import { isDataException } from "../db/connectionRetry.js"
import { makeGroupCommit } from "../db/groupCommit.js"
import { EventQueue } from "./EventQueue.js"
import { firstAttemptAt, maxAheadMs } from "./firstAttempt.js"
import type { ReceivedEvent } from "./queuedEvents.js"
import * as Metrics from "../observability/metrics.js"
import { matchAccount } from "../auth/accountIds.js"
import { WorkNotices } from "../auth/WorkNotices.js"
import { Connections } from "../auth/Connections.js"
import { verifySignature, WebhookForeignApp, WebhookMalformed, type WebhookSignatureInvalid } from "./webhookSignature.js"
import { OAuthClient } from "../auth/OAuthClient.js"

export { signatureHeader, verifySignature, WebhookForeignApp, WebhookMalformed, WebhookSignatureInvalid } from "./webhookSignature.js"

const WebHookEvent = Schema.Struct({
  topic: Schema.String,
  appId: Schema.String,
  accountId: Schema.String,
  itemId: Schema.String,
  occuredAt: Schema.String
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Schema.Struct({ data: Schema.Struct({ webHookEvent: WebHookEvent }) })))

/**
 * `occuredAt` as RFC 3339 with a four-digit year (what the service sends): a time both JavaScript and Postgres hold.
 * Anything else (a year past 9999, a bare number) is refused with 400, not stored and not answered 500 forever.
 */
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i
const occurredAtOf = (text: string): number | undefined => {
  const ms = Date.parse(text)
  return rfc3339.test(text) && !Number.isNaN(ms) ? ms : undefined
}

/** A topic as a metric label: the service's topics by name, anything else as `other` (the label set stays bounded). */
const knownTopics = new Set(webhookTopicNames())
export const topicLabel = (topic: string): string => (knownTopics.has(topic) ? topic : "other")

/** The first field holding a NUL character, which Postgres text cannot store (a 400, not a 500 the sender retries forever). */
const fieldWithNul = (event: typeof WebHookEvent.Type) =>
  (["topic", "appId", "accountId", "itemId", "occuredAt"] as const).find((field) => event[field].includes("\u0000"))

/** The most deliveries one INSERT records. */
const maxGroup = 500

/**
 * Groups recorded at once: a delivery waits for a free writer, not for the group in flight to commit (with one writer
 * it waited for that group's commit and then its own: twice a commit's time). Two, not more: under a burst more
 * writers made groups of one, a statement per delivery, each round trip handing serve's core to Postgres (the answer's
 * p99 at the sender several times two writers'; docs/performance.md).
 */
const groupWriters = 2

/**
 * What became of a delivery: recorded for the consumer (Queued), applied at once (APP_DISCONNECT), recorded for an
 * account no connection matches (Unmatched: `status` shows it), or already recorded (Duplicate).
 */
export type WebhookOutcome =
  | { readonly _tag: "Queued"; readonly topic: string; readonly accountId: string }
  | { readonly _tag: "Applied"; readonly topic: string; readonly accountId: string; readonly changed: boolean }
  | { readonly _tag: "Unmatched"; readonly topic: string; readonly accountId: string }
  | { readonly _tag: "Duplicate"; readonly topic: string; readonly accountId: string }

/**
 * serve's `/webhooks`: every delivery verified (HMAC over the raw body), then recorded once in the event queue
 * (its id is the hash of what it says: a redelivery is the same event) and answered; the re-fetch it asks for is the
 * consumer's (sync/events), so the answer never waits on the service. APP_DISCONNECT is applied at once.
 */
export class EventInbox extends Context.Tag("account-sync/EventInbox")<
  EventInbox,
  {
    readonly receive: (
      body: Uint8Array,
      signature: string | undefined
    ) => Effect.Effect<WebhookOutcome, WebhookSignatureInvalid | WebhookMalformed | WebhookForeignApp | SqlError.SqlError>
  }
>() {}

export const EventInboxLive = Layer.scoped(
  EventInbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* OAuthClient
    const connections = yield* Connections
    const queue = yield* EventQueue

    // Deliveries that arrive while the groups' INSERTs run are recorded together by the next (group commit): under
    // load one statement and one commit for a group, not one each waiting for a pooled connection. A value Postgres
    // refuses (SQLSTATE class 22) fails the group's statement: each of its deliveries is then recorded alone, so only
    // the bad one is refused.
    const record = yield* makeGroupCommit(
      (events: ReadonlyArray<ReceivedEvent>) =>
        queue.enqueueMany(events).pipe(
          Effect.map((news) => news.map((recorded) => Either.right<boolean>(recorded))),
          Effect.catchIf(
            (e) => events.length > 1 && isDataException(e),
            () => Effect.forEach(events, (event) => Effect.either(queue.enqueue(event)))
          )
        ),
      maxGroup,
      groupWriters
    )

    // With workers (WorkNotices in the request's context), the events job is enqueued after the answer, off its path:
    // the recorded row is what counts (if this process dies first, the schedule's next tick finds the account's events
    // due and enqueues the job). The notices waiting are sent together, one per account (its earliest due time; repeats
    // collapse into that job anyway).
    type Notice = { readonly notices: WorkNotices["Type"]; readonly accountId: string; readonly dueAt: Date }
    const noticesDue = yield* Effect.acquireRelease(Queue.unbounded<Notice>(), Queue.shutdown)
    yield* Queue.takeBetween(noticesDue, 1, Number.MAX_SAFE_INTEGER).pipe(
      Effect.flatMap((waiting) => {
        const earliest = new Map<string, Notice>()
        for (const notice of waiting) {
          const known = earliest.get(notice.accountId)
          if (known === undefined || notice.dueAt < known.dueAt) earliest.set(notice.accountId, notice)
        }
        return Effect.forEach(
          earliest.values(),
          ({ notices, accountId, dueAt }) =>
            notices.changed(accountId, dueAt).pipe(Effect.catchAll((e) => Effect.logWarning(`${e.message} (the schedule's next tick will enqueue it)`))),
          { discard: true }
        )
      }),
      Effect.forever,
      Effect.forkScoped
    )

    const ourAppIds = new Set([settings.clientId, ...Option.toArray(settings.appId)])
    // connection rows are never deleted: an id matched once matches for good, so the ids are read again only when a
    // delivery names none of them (not once per delivery: at 200 deliveries a second that query was a third of the work)
    const known = yield* Ref.make<ReadonlyArray<string>>([])
    const matchConnected = (sent: string) =>
      Effect.gen(function* () {
        const hit = matchAccount(sent, yield* Ref.get(known))
        if (hit !== undefined) return hit
        const ids = (yield* connections.list()).map((c) => c.accountId)
        yield* Ref.set(known, ids)
        return matchAccount(sent, ids)
      })

    const receive = (body: Uint8Array, signature: string | undefined) =>
      Effect.gen(function* () {
        yield* verifySignature(settings.clientSecret, body, signature)
        const payload = decodePayload(Buffer.from(body).toString("utf8"))
        if (Either.isLeft(payload)) {
          return yield* new WebhookMalformed({ reason: "expected {data:{webHookEvent:{topic,appId,accountId,itemId,occuredAt}}}" })
        }
        const event = payload.right.data.webHookEvent
        const nul = fieldWithNul(event)
        if (nul !== undefined) return yield* new WebhookMalformed({ reason: `${nul} contains a NUL character, which cannot be stored` })
        if (!ourAppIds.has(event.appId)) return yield* new WebhookForeignApp({ appId: event.appId })
        const occurredMs = occurredAtOf(event.occuredAt)
        if (occurredMs === undefined) {
          return yield* new WebhookMalformed({ reason: `occuredAt ${JSON.stringify(event.occuredAt.slice(0, 40))} is not an RFC 3339 time with a four-digit year` })
        }
        const eventId = crypto
          .createHash("sha256")
          .update([event.topic, event.appId, event.accountId, event.itemId, event.occuredAt].join("|"))
          .digest("hex")
        const receivedMs = yield* Clock.currentTimeMillis
        if (occurredMs - receivedMs > maxAheadMs) {
          yield* Effect.logWarning(
            `webhook ${topicLabel(event.topic)}: occuredAt ${event.occuredAt} is ${Math.round((occurredMs - receivedMs) / 1000)} s ahead of this server's clock; applied as if it had just happened`
          )
        }
        const accountId = yield* matchConnected(event.accountId)
        const disconnect = event.topic === "APP_DISCONNECT"
        const received: ReceivedEvent = {
          eventId,
          topic: event.topic,
          appId: event.appId,
          accountId: accountId ?? null,
          sentAccountId: event.accountId,
          itemId: event.itemId,
          occurredAt: new Date(occurredMs),
          receivedAt: new Date(receivedMs),
          applied: disconnect
        }
        const recordAndApply = Effect.gen(function* () {
          const recorded = yield* (disconnect ? queue.enqueue(received) : record(received))
          const base = { topic: event.topic, accountId: accountId ?? event.accountId }
          if (!recorded) return { _tag: "Duplicate" as const, ...base }
          if (accountId === undefined) return { _tag: "Unmatched" as const, ...base }
          if (!disconnect) return { _tag: "Queued" as const, ...base }
          const changed = yield* connections.markDisconnected(accountId, `APP_DISCONNECT webhook (${event.occuredAt})`, {
            occurredAt: new Date(occurredMs)
          })
          return { _tag: "Applied" as const, ...base, changed }
        })
        // a change event is recorded with its group (answered once that commits); APP_DISCONNECT commits with the disconnect it applies
        const outcome = yield* (disconnect ? sql.withTransaction(recordAndApply) : recordAndApply).pipe(
          // a value Postgres refuses (SQLSTATE class 22) is the delivery's fault: the same body would be refused forever
          Effect.catchIf(isDataException, (e) => new WebhookMalformed({ reason: `it cannot be stored: ${e.cause instanceof Error ? e.cause.message : e.message}` }))
        )
        // with workers: an events job for the account, due when the change has settled (repeats collapse into it)
        const notices = yield* Effect.serviceOption(WorkNotices)
        if (outcome._tag === "Queued" && accountId !== undefined && Option.isSome(notices)) {
          yield* Queue.offer(noticesDue, { notices: notices.value, accountId, dueAt: firstAttemptAt(received.occurredAt, received.receivedAt) })
        }
        yield* outcome._tag === "Duplicate"
          ? Metric.increment(Metrics.eventDuplicates)
          : Metric.increment(Metric.tagged(Metrics.eventsReceived, "topic", topicLabel(event.topic)))
        return outcome
      }).pipe(
        Effect.tap((outcome) =>
          (outcome._tag === "Queued"
            ? Effect.logDebug(`webhook ${outcome.topic} queued`)
            : Effect.logInfo(
                outcome._tag === "Applied"
                  ? outcome.changed
                    ? "APP_DISCONNECT: tokens deleted, connection disconnected"
                    : "APP_DISCONNECT: no connection older than the event; nothing to change"
                  : outcome._tag === "Duplicate"
                    ? `webhook ${outcome.topic} already received; acknowledged again`
                    : `webhook ${outcome.topic} for account ${outcome.accountId}, which matches no connection: recorded (see status)`
              )
          ).pipe(Effect.annotateLogs({ accountId: outcome.accountId, topic: outcome.topic }))
        ),
        Effect.tapError((e) => (e._tag === "SqlError" ? Effect.logError("webhook could not be stored", e) : Effect.logWarning(e.message)))
      )

    return EventInbox.of({ receive })
  })
)

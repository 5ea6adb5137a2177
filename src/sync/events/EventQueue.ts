import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryingOnConnectionLoss } from "../../db/connectionRetry.js"
import { rowsOrDie } from "../../db/rows.js"

/** What a queued change event is to the consumer. */
export interface QueuedEvent {
  readonly id: string
  readonly topic: string
  readonly itemId: string
  readonly occurredAt: Date
  readonly attempts: number
}

/** Where an account's change events stand (`status`). */
export interface AccountEvents {
  readonly accountId: string
  readonly waiting: number
  readonly oldestWaitingSince: Date | null
  readonly lastApplied: { readonly topic: string; readonly itemId: string; readonly appliedAt: Date } | null
  readonly failed: number
  readonly lastError: string | null
  readonly deferred: number
}

/** Deliveries for account ids no connection matches (`status`): recorded, never an error to the service. */
export interface UnmatchedAccount {
  readonly sentAccountId: string
  readonly events: number
  readonly lastReceivedAt: Date
}

const QueuedRow = Schema.Struct({
  event_id: Schema.String,
  topic: Schema.String,
  item_id: Schema.String,
  occurred_at: Schema.DateFromSelf,
  attempts: Schema.Number
})
const AccountRow = Schema.Struct({ account_id: Schema.String })
const DepthRow = Schema.Struct({ account_id: Schema.String, waiting: Schema.Number })
const StatusRow = Schema.Struct({
  account_id: Schema.String,
  waiting: Schema.Number,
  oldest_waiting: Schema.NullOr(Schema.DateFromSelf),
  failed: Schema.Number,
  deferred: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  last_topic: Schema.NullOr(Schema.String),
  last_item: Schema.NullOr(Schema.String),
  last_applied_at: Schema.NullOr(Schema.DateFromSelf)
})
const UnmatchedRow = Schema.Struct({ sent_account_id: Schema.String, events: Schema.Number, last_received_at: Schema.DateFromSelf })

/**
 * The change events waiting in `webhook_events` (recorded by the webhook inbox): which accounts have some due, an
 * account's due events in arrival order, and their settling (applied, retried later, failed, deferred to a full pass).
 */
export class EventQueue extends Context.Tag("account-sync/EventQueue")<
  EventQueue,
  {
    /** Accounts with an event due (pending, its time come). */
    readonly accountsDue: (now: Date) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    readonly due: (accountId: string, now: Date, limit: number) => Effect.Effect<ReadonlyArray<QueuedEvent>, SqlError.SqlError>
    /** Applied (joins the surrounding transaction: the landing of what it named). */
    readonly applied: (ids: ReadonlyArray<string>, at: Date, state?: "applied" | "ignored" | "deferred") => Effect.Effect<void, SqlError.SqlError>
    /** Tried and failed: again at `nextAt`, or (`nextAt` null) given up on, visible in `status` with the error. */
    readonly failed: (ids: ReadonlyArray<string>, error: string, nextAt: Date | null) => Effect.Effect<void, SqlError.SqlError>
    /** Pending events per account (the queue depth gauge). */
    readonly depth: () => Effect.Effect<ReadonlyArray<{ readonly accountId: string; readonly waiting: number }>, SqlError.SqlError>
    readonly status: () => Effect.Effect<ReadonlyArray<AccountEvents>, SqlError.SqlError>
    readonly unmatched: () => Effect.Effect<ReadonlyArray<UnmatchedAccount>, SqlError.SqlError>
    /** When the account's latest event with a topic of this prefix (`JOB`: JOB_*) arrived, if any did. */
    readonly lastReceived: (accountId: string, topicPrefix: string) => Effect.Effect<Date | null, SqlError.SqlError>
  }
>() {}

export const EventQueueLive = Layer.effect(
  EventQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accountsDue = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: AccountRow,
      execute: (now) => sql`
        SELECT DISTINCT account_id FROM webhook_events WHERE state = 'pending' AND account_id IS NOT NULL AND next_attempt_at <= ${now}`
    })
    const due = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, now: Schema.DateFromSelf, limit: Schema.Number }),
      Result: QueuedRow,
      execute: ({ accountId, now, limit }) => sql`
        SELECT event_id, topic, item_id, occurred_at, attempts FROM webhook_events
        WHERE account_id = ${accountId} AND state = 'pending' AND next_attempt_at <= ${now}
        ORDER BY next_attempt_at, received_at LIMIT ${limit}`
    })
    const depth = SqlSchema.findAll({
      Request: Schema.Void,
      Result: DepthRow,
      execute: () => sql`SELECT account_id, count(*)::int AS waiting FROM webhook_events WHERE state = 'pending' AND account_id IS NOT NULL GROUP BY account_id`
    })
    const status = SqlSchema.findAll({
      Request: Schema.Void,
      Result: StatusRow,
      execute: () => sql`
        SELECT c.account_id,
          (SELECT count(*)::int FROM webhook_events e WHERE e.account_id = c.account_id AND e.state = 'pending') AS waiting,
          (SELECT min(e.occurred_at) FROM webhook_events e WHERE e.account_id = c.account_id AND e.state = 'pending') AS oldest_waiting,
          (SELECT count(*)::int FROM webhook_events e WHERE e.account_id = c.account_id AND e.state = 'failed') AS failed,
          (SELECT count(*)::int FROM webhook_events e WHERE e.account_id = c.account_id AND e.state = 'deferred') AS deferred,
          (SELECT e.error FROM webhook_events e WHERE e.account_id = c.account_id AND e.error IS NOT NULL
             ORDER BY e.received_at DESC LIMIT 1) AS last_error,
          a.topic AS last_topic, a.item_id AS last_item, a.applied_at AS last_applied_at
        FROM connections c
        LEFT JOIN LATERAL (
          SELECT e.topic, e.item_id, e.applied_at FROM webhook_events e
          WHERE e.account_id = c.account_id AND e.state = 'applied' ORDER BY e.applied_at DESC LIMIT 1
        ) a ON true
        ORDER BY c.account_id`
    })
    const unmatched = SqlSchema.findAll({
      Request: Schema.Void,
      Result: UnmatchedRow,
      execute: () => sql`
        SELECT sent_account_id, count(*)::int AS events, max(received_at) AS last_received_at FROM webhook_events
        WHERE state = 'unmatched' GROUP BY sent_account_id ORDER BY max(received_at) DESC`
    })
    const lastReceived = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, pattern: Schema.String }),
      Result: Schema.Struct({ received_at: Schema.DateFromSelf }),
      execute: ({ accountId, pattern }) => sql`
        SELECT received_at FROM webhook_events WHERE account_id = ${accountId} AND topic LIKE ${pattern}
        ORDER BY received_at DESC LIMIT 1`
    })
    return EventQueue.of(
      retryingOnConnectionLoss({
        accountsDue: (now: Date) => Effect.map(rowsOrDie(accountsDue(now)), (rows) => rows.map((r) => r.account_id)),
        due: (accountId: string, now: Date, limit: number) =>
          Effect.map(rowsOrDie(due({ accountId, now, limit })), (rows) =>
            rows.map((r) => ({ id: r.event_id, topic: r.topic, itemId: r.item_id, occurredAt: r.occurred_at, attempts: r.attempts }))
          ),
        applied: (ids: ReadonlyArray<string>, at: Date, state: "applied" | "ignored" | "deferred" = "applied") =>
          Effect.asVoid(sql`
            UPDATE webhook_events SET state = ${state}, applied_at = ${at}, attempts = attempts + 1, error = NULL
            WHERE event_id IN ${sql.in(ids)} AND state = 'pending'`),
        failed: (ids: ReadonlyArray<string>, error: string, nextAt: Date | null) =>
          Effect.asVoid(sql`
            UPDATE webhook_events SET attempts = attempts + 1, error = ${error},
              state = ${nextAt === null ? "failed" : "pending"}, next_attempt_at = COALESCE(${nextAt}, next_attempt_at)
            WHERE event_id IN ${sql.in(ids)} AND state = 'pending'`),
        depth: () => Effect.map(rowsOrDie(depth(undefined)), (rows) => rows.map((r) => ({ accountId: r.account_id, waiting: r.waiting }))),
        status: () =>
          Effect.map(rowsOrDie(status(undefined)), (rows) =>
            rows.map(
              (r): AccountEvents => ({
                accountId: r.account_id,
                waiting: r.waiting,
                oldestWaitingSince: r.oldest_waiting,
                lastApplied: r.last_topic && r.last_item && r.last_applied_at ? { topic: r.last_topic, itemId: r.last_item, appliedAt: r.last_applied_at } : null,
                failed: r.failed,
                lastError: r.last_error,
                deferred: r.deferred
              })
            )
          ),
        lastReceived: (accountId: string, topicPrefix: string) =>
          Effect.map(rowsOrDie(lastReceived({ accountId, pattern: `${topicPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}\\_%` })), (rows) => rows[0]?.received_at ?? null),
        unmatched: () =>
          Effect.map(rowsOrDie(unmatched(undefined)), (rows) =>
            rows.map((r) => ({ sentAccountId: r.sent_account_id, events: r.events, lastReceivedAt: r.last_received_at }))
          )
      })
    )
  })
)

import { SqlClient, type SqlError, SqlSchema, type Statement } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"
import { insertEvents } from "./eventInsert.js"
import { AccountRow, DepthRow, IdRow, QueuedRow, StatusRow, UnmatchedRow } from "./eventQueueRows.js"
import type { AccountEvents, QueuedEvent, ReceivedEvent, UnmatchedAccount } from "./queuedEvents.js"

/**
 * The change-event queue, `webhook_events`: the one module with its SQL (its INSERT built in eventInsert). The webhook
 * inbox (auth) records deliveries through it, the consumer (sync/events) claims and settles them through it,
 * retention prunes through it.
 *
 * A delivery's state: `pending` (due at `next_attempt_at`; none while its account waits for a reconnect), `applied`,
 * `ignored` (a topic no stream takes), `deferred` (left to the stream's next full pass), `failed` (given up on after
 * its attempts), `unmatched` (an account no connection matched).
 */

/** The LIKE pattern of a topic prefix's topics (`JOB` matches `JOB_CREATE`, `JOB_UPDATE`, ...). */
const topicPattern = (topicPrefix: string) => `${topicPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}\\_%`

/** Rows taken per DELETE, so a large backlog is pruned in short statements. */
const pruneBatch = 5_000

export class EventQueue extends Context.Tag("account-sync/EventQueue")<
  EventQueue,
  {
    /**
     * Records a delivery once (false: it was recorded before). Pending events are first due `firstAttemptAt`. Joins
     * the surrounding transaction (APP_DISCONNECT commits with the disconnect it applies).
     */
    readonly enqueue: (event: ReceivedEvent) => Effect.Effect<boolean, SqlError.SqlError>
    /**
     * Records deliveries in one statement (one commit when there is no surrounding transaction): for each, in order,
     * whether it was new (false: recorded before, or earlier in `events`).
     */
    readonly enqueueMany: (events: ReadonlyArray<ReceivedEvent>) => Effect.Effect<ReadonlyArray<boolean>, SqlError.SqlError>
    /** Accounts with an event due (pending, its time come). */
    readonly accountsDue: (now: Date) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    /** When the account's next pending event is due (a retry's backoff, a change still settling); null: none pending. */
    readonly nextAttemptAt: (accountId: string) => Effect.Effect<Date | null, SqlError.SqlError>
    readonly due: (accountId: string, now: Date, limit: number) => Effect.Effect<ReadonlyArray<QueuedEvent>, SqlError.SqlError>
    /** Applied (joins the surrounding transaction: the landing of what it named). */
    readonly applied: (ids: ReadonlyArray<string>, at: Date, state?: "applied" | "ignored" | "deferred") => Effect.Effect<void, SqlError.SqlError>
    /** Tried and failed: again at `nextAt`, or (`nextAt` null) given up on, visible in `status` with the error. */
    readonly failed: (ids: ReadonlyArray<string>, error: string, nextAt: Date | null) => Effect.Effect<void, SqlError.SqlError>
    /** The account cannot be read (revoked, disconnected): its pending events wait for a reconnect, no attempt counted. How many. */
    readonly waitForReconnect: (accountId: string, reason: string) => Effect.Effect<number, SqlError.SqlError>
    /** Accounts whose events wait for a reconnect. */
    readonly accountsWaitingForReconnect: () => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
    /** The account is connected again: its waiting events are due at `at`. */
    readonly resume: (accountId: string, at: Date) => Effect.Effect<void, SqlError.SqlError>
    /** Pending events per account (the queue depth gauge). */
    readonly depth: () => Effect.Effect<ReadonlyArray<{ readonly accountId: string; readonly waiting: number }>, SqlError.SqlError>
    readonly status: () => Effect.Effect<ReadonlyArray<AccountEvents>, SqlError.SqlError>
    readonly unmatched: () => Effect.Effect<ReadonlyArray<UnmatchedAccount>, SqlError.SqlError>
    /**
     * When the account's latest applied event with a topic of this prefix (`JOB`: JOB_*) arrived, if one did: events
     * that wait (for a reconnect, a retry) or failed do not say that the stream's changes flow.
     */
    readonly lastApplied: (accountId: string, topicPrefix: string) => Effect.Effect<Date | null, SqlError.SqlError>
    /** `lastApplied` of each of these topic prefixes, in one statement: by prefix (absent: none applied). */
    readonly lastAppliedByTopic: (accountId: string, topicPrefixes: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Date>, SqlError.SqlError>
    /**
     * `lastAppliedByTopic` in two halves, for a statement that reads more: the query (columns `prefix`, `received_at`;
     * no row when no prefix is given) and what its rows say (those with a `prefix`: the statement may carry others).
     */
    readonly lastAppliedQuery: (accountId: string, topicPrefixes: ReadonlyArray<string>) => Statement.Fragment
    readonly lastAppliedFrom: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyMap<string, Date>>
    /**
     * Deletes what is done with and older than `cutoff`: settled deliveries (applied, ignored, unmatched, deferred to a
     * full pass, failed) by when they settled, and events still waiting for a reconnect by when they arrived. Events
     * due or being retried are kept. The number deleted.
     */
    readonly prune: (cutoff: Date) => Effect.Effect<number, SqlError.SqlError>
  }
>() {}

export const EventQueueLive = Layer.effect(
  EventQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = insertEvents(sql)
    const enqueueMany = (events: ReadonlyArray<ReceivedEvent>) =>
      events.length === 0
        ? Effect.succeed([])
        : Effect.map(rowsOrDie(insert(events)), (rows) => {
            // an id repeated within `events` is inserted once: new for its first occurrence only
            const inserted = new Set(rows.map((r) => r.event_id))
            return events.map((e) => inserted.delete(e.eventId))
          })
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
    const nextAttempt = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ at: Schema.NullOr(Schema.DateFromSelf) }),
      execute: (accountId) => sql`SELECT min(next_attempt_at) AS at FROM webhook_events WHERE account_id = ${accountId} AND state = 'pending'`
    })
    const waiting = SqlSchema.findAll({
      Request: Schema.Void,
      Result: AccountRow,
      execute: () => sql`SELECT DISTINCT account_id FROM webhook_events WHERE state = 'pending' AND account_id IS NOT NULL AND next_attempt_at IS NULL`
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
          (SELECT count(*)::int FROM webhook_events e WHERE e.account_id = c.account_id AND e.state = 'pending' AND e.next_attempt_at IS NULL)
            AS waiting_for_reconnect,
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
    const lastApplied = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, pattern: Schema.String }),
      Result: Schema.Struct({ received_at: Schema.DateFromSelf }),
      execute: ({ accountId, pattern }) => sql`
        SELECT received_at FROM webhook_events WHERE account_id = ${accountId} AND state = 'applied' AND topic LIKE ${pattern}
        ORDER BY received_at DESC LIMIT 1`
    })
    const lastAppliedQuery = (accountId: string, prefixes: ReadonlyArray<string>) => sql`
        SELECT t.prefix, e.received_at FROM unnest(${prefixes}::text[], ${prefixes.map(topicPattern)}::text[]) AS t(prefix, pattern)
        CROSS JOIN LATERAL (SELECT received_at FROM webhook_events WHERE account_id = ${accountId} AND state = 'applied' AND topic LIKE t.pattern
          ORDER BY received_at DESC LIMIT 1) e`
    const LastAppliedRow = Schema.Struct({ prefix: Schema.String, received_at: Schema.DateFromSelf })
    const lastAppliedEach = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, prefixes: Schema.Array(Schema.String) }),
      Result: LastAppliedRow,
      execute: ({ accountId, prefixes }) => lastAppliedQuery(accountId, prefixes)
    })
    const byPrefix = (rows: ReadonlyArray<typeof LastAppliedRow.Type>) => new Map(rows.map((r) => [r.prefix, r.received_at])) as ReadonlyMap<string, Date>
    const decodeLastApplied = Schema.decodeUnknown(Schema.Array(LastAppliedRow))
    const pruneRows = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: IdRow,
      execute: (cutoff) => sql`
        DELETE FROM webhook_events WHERE event_id IN (
          SELECT event_id FROM webhook_events
          WHERE (state IN ('applied', 'ignored', 'unmatched', 'deferred', 'failed') AND coalesce(applied_at, received_at) < ${cutoff})
             OR (state = 'pending' AND next_attempt_at IS NULL AND received_at < ${cutoff})
          LIMIT ${pruneBatch})
        RETURNING event_id`
    })

    return EventQueue.of({
      lastAppliedQuery,
      // the rows of lastAppliedQuery among a statement's others (no prefix: not its own)
      lastAppliedFrom: (rows) => Effect.map(Effect.orDie(decodeLastApplied(rows.filter((r) => (r as { prefix?: unknown }).prefix != null))), byPrefix),
      // one statement: in the caller's transaction when there is one, so it is not repeated here on a lost session
      enqueue: (event) => Effect.map(enqueueMany([event]), (news) => news[0]!),
      enqueueMany,
      ...retryingOnConnectionLoss({
        accountsDue: (now: Date) => Effect.map(rowsOrDie(accountsDue(now)), (rows) => rows.map((r) => r.account_id)),
        nextAttemptAt: (accountId: string) => Effect.map(rowsOrDie(nextAttempt(accountId)), (r) => r.at),
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
        waitForReconnect: (accountId: string, reason: string) =>
          Effect.map(
            sql`
              UPDATE webhook_events SET next_attempt_at = NULL, error = ${reason}
              WHERE account_id = ${accountId} AND state = 'pending' RETURNING event_id`,
            (rows) => rows.length
          ),
        accountsWaitingForReconnect: () => Effect.map(rowsOrDie(waiting(undefined)), (rows) => rows.map((r) => r.account_id)),
        resume: (accountId: string, at: Date) =>
          Effect.asVoid(sql`
            UPDATE webhook_events SET next_attempt_at = ${at}, error = NULL
            WHERE account_id = ${accountId} AND state = 'pending' AND next_attempt_at IS NULL`),
        depth: () => Effect.map(rowsOrDie(depth(undefined)), (rows) => rows.map((r) => ({ accountId: r.account_id, waiting: r.waiting }))),
        status: () =>
          Effect.map(rowsOrDie(status(undefined)), (rows) =>
            rows.map(
              (r): AccountEvents => ({
                accountId: r.account_id,
                waiting: r.waiting,
                waitingForReconnect: r.waiting_for_reconnect,
                oldestWaitingSince: r.oldest_waiting,
                lastApplied: r.last_topic && r.last_item && r.last_applied_at ? { topic: r.last_topic, itemId: r.last_item, appliedAt: r.last_applied_at } : null,
                failed: r.failed,
                lastError: r.last_error,
                deferred: r.deferred
              })
            )
          ),
        lastApplied: (accountId: string, topicPrefix: string) =>
          Effect.map(rowsOrDie(lastApplied({ accountId, pattern: topicPattern(topicPrefix) })), (rows) => rows[0]?.received_at ?? null),
        lastAppliedByTopic: (accountId: string, topicPrefixes: ReadonlyArray<string>) =>
          topicPrefixes.length === 0
            ? Effect.succeed(new Map<string, Date>())
            : Effect.map(rowsOrDie(lastAppliedEach({ accountId, prefixes: topicPrefixes })), byPrefix),
        unmatched: () =>
          Effect.map(rowsOrDie(unmatched(undefined)), (rows) =>
            rows.map((r) => ({ sentAccountId: r.sent_account_id, events: r.events, lastReceivedAt: r.last_received_at }))
          ),
        prune: (cutoff: Date) =>
          Effect.gen(function* () {
            let total = 0
            for (;;) {
              const deleted = (yield* rowsOrDie(pruneRows(cutoff))).length
              total += deleted
              if (deleted < pruneBatch) return total
            }
          })
      })
    })
  })
)

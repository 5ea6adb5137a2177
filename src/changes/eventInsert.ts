import { type SqlClient, SqlSchema } from "@effect/sql"
import { Schema } from "effect"
import { IdRow } from "./eventQueueRows.js"
import { firstAttemptAt } from "./firstAttempt.js"
import type { ReceivedEvent } from "./queuedEvents.js"

/** A delivery as its `webhook_events` row: pending, applied (APP_DISCONNECT) or unmatched. */
const rowOf = (e: ReceivedEvent) => {
  const state = e.accountId === null ? "unmatched" : e.applied ? "applied" : "pending"
  return {
    event_id: e.eventId,
    topic: e.topic,
    app_id: e.appId,
    account_id: e.accountId,
    sent_account_id: e.sentAccountId,
    item_id: e.itemId,
    occurred_at: e.occurredAt,
    received_at: e.receivedAt,
    state,
    next_attempt_at: firstAttemptAt(e.occurredAt, e.receivedAt),
    applied_at: state === "applied" ? e.receivedAt : null
  }
}

// One statement text for any number of rows (arrays, not a VALUES list a group's size long): prepared once per
// session, not parsed and described again for each new group size. Rows go in event_id order, so two groups in
// flight at once that share ids wait on each other in the same order (no deadlock).
export const insertEvents = (sql: SqlClient.SqlClient) =>
  SqlSchema.findAll({
    Request: Schema.Any,
    Result: IdRow,
    execute: (events: ReadonlyArray<ReceivedEvent>) => {
      const rows = events.map(rowOf).sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0))
      const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((r) => r[key])
      const time = (key: "occurred_at" | "received_at" | "next_attempt_at" | "applied_at") => rows.map((r) => r[key]?.toISOString() ?? null)
      return sql`
        INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, next_attempt_at, applied_at)
        SELECT * FROM unnest(${column("event_id")}::text[], ${column("topic")}::text[], ${column("app_id")}::text[], ${column("account_id")}::text[],
          ${column("sent_account_id")}::text[], ${column("item_id")}::text[], ${time("occurred_at")}::timestamptz[], ${time("received_at")}::timestamptz[],
          ${column("state")}::text[], ${time("next_attempt_at")}::timestamptz[], ${time("applied_at")}::timestamptz[])
        ON CONFLICT (event_id) DO NOTHING RETURNING event_id`
    }
  })

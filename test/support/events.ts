import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"

export interface TestEvent {
  readonly topic: string
  readonly itemId: string
  /** ISO 8601, service time. */
  readonly occurredAt: string
}

/**
 * Change events queued for an account as the webhook inbox records a verified delivery (pending, due now). For the
 * consumer's tests; the inbox's own tests post signed deliveries to `/webhooks`.
 */
export const queueEvents = (accountId: string, events: ReadonlyArray<TestEvent>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const e of events) {
      yield* sql`
        INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, next_attempt_at)
        VALUES (${crypto.randomUUID()}, ${e.topic}, 'test-app', ${accountId}, ${accountId}, ${e.itemId}, ${e.occurredAt}, now(), 'pending', now())`
    }
  })

/** The events of an account by state, and the errors of the failed ones. */
export const eventStates = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ state: string; n: number }>`
      SELECT state, count(*)::int AS n FROM webhook_events WHERE account_id = ${accountId} GROUP BY state`
    return Object.fromEntries(rows.map((r) => [r.state, r.n])) as Record<string, number>
  })

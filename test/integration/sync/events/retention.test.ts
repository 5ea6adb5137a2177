import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { EventRetention, EventRetentionLive } from "../../../../src/sync/events/EventRetention.js"
import { withEnv } from "../../../support/config.js"
import { TestDatabaseLive } from "../../../support/database.js"

const Stack = EventRetentionLive.pipe(Layer.provideMerge(TestDatabaseLive), Layer.provide(withEnv({ WEBHOOK_EVENTS_RETENTION: "30 days" })))

const now = Date.parse("2030-06-01T00:00:00Z")
const daysAgo = (days: number) => new Date(now - days * 86_400_000)

/** A delivery in `state`, received `receivedDaysAgo` days before `now` (and settled then, when it is settled). */
const insert = (id: string, state: string, receivedDaysAgo: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const at = daysAgo(receivedDaysAgo)
    const settled = state === "applied" || state === "ignored" || state === "deferred" ? at : null
    return sql`
      INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, next_attempt_at, applied_at)
      VALUES (${id}, 'JOB_UPDATE', 'app', 'acc', 'acc', 'item', ${at}, ${at}, ${state}, ${at}, ${settled})`
  })

const ids = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ event_id: string }>`SELECT event_id FROM webhook_events ORDER BY event_id`, (rows) => rows.map((r) => r.event_id))
)

layer(Stack)("webhook_events retention", (it) => {
  it.effect("settled deliveries (applied, ignored, unmatched) older than WEBHOOK_EVENTS_RETENTION are pruned; pending, failed and deferred never", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM webhook_events`
      yield* TestClock.setTime(now)
      yield* insert("applied-old", "applied", 31)
      yield* insert("applied-recent", "applied", 29)
      yield* insert("ignored-old", "ignored", 31)
      yield* insert("unmatched-old", "unmatched", 45)
      yield* insert("unmatched-recent", "unmatched", 1)
      yield* insert("pending-old", "pending", 90)
      yield* insert("failed-old", "failed", 90)
      yield* insert("deferred-old", "deferred", 90)
      // applied long after it arrived (a retried event): kept for the retention after it was applied
      yield* sql`
        INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, applied_at)
        VALUES ('applied-late', 'JOB_UPDATE', 'app', 'acc', 'acc', 'item', ${daysAgo(40)}, ${daysAgo(40)}, 'applied', ${daysAgo(2)})`

      expect(yield* (yield* EventRetention).prune).toBe(3)
      expect(yield* ids).toEqual(["applied-late", "applied-recent", "deferred-old", "failed-old", "pending-old", "unmatched-recent"])
    })
  )

  it.effect("serve's loop prunes at once, then every hour", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM webhook_events`
      yield* TestClock.setTime(now)
      yield* insert("a", "applied", 31)
      yield* insert("b", "applied", 30 - 1 / 48) // passes the retention in half an hour
      const gone = (id: string) =>
        // the loop's statements are real I/O: look again (no sleep) until the row is gone
        Effect.flatMap(ids, (left) => (left.includes(id) ? Effect.fail("still there") : Effect.void)).pipe(Effect.retry({ times: 2_000 }))

      const fiber = yield* Effect.fork((yield* EventRetention).run)
      yield* gone("a")
      expect(yield* ids).toEqual(["b"])
      yield* TestClock.adjust(Duration.minutes(59))
      expect(yield* ids).toEqual(["b"])
      yield* TestClock.adjust(Duration.minutes(1))
      yield* gone("b")
      expect(yield* ids).toEqual([])
      yield* Fiber.interrupt(fiber)
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Clock, Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { EventQueueLive } from "../../../src/changes/EventQueue.js"
import { EventRetention, EventRetentionLive } from "../../../src/changes/EventRetention.js"
import { withEnv } from "../../support/config.js"
import { TestDatabaseLive } from "../../support/database.js"

const Stack = EventRetentionLive.pipe(
  Layer.provide(EventQueueLive),
  Layer.provideMerge(TestDatabaseLive),
  Layer.provide(withEnv({ WEBHOOK_EVENTS_RETENTION: "30 days" }))
)

const now = Date.parse("2030-06-01T00:00:00Z")
const daysAgo = (days: number) => new Date(now - days * 86_400_000)

/**
 * A delivery in `state`, received `receivedDaysAgo` days before `now` (and settled then, when it is settled);
 * `waiting-for-reconnect` is a pending one with no attempt time.
 */
const insert = (id: string, state: string, receivedDaysAgo: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const at = daysAgo(receivedDaysAgo)
    const settled = state === "applied" || state === "ignored" || state === "deferred" ? at : null
    const waiting = state === "waiting-for-reconnect"
    return sql`
      INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, next_attempt_at, applied_at)
      VALUES (${id}, 'JOB_UPDATE', 'app', 'acc', 'acc', 'item', ${at}, ${at}, ${waiting ? "pending" : state}, ${waiting ? null : at}, ${settled})`
  })

/** A turn of Node's event loop: the I/O a fiber waits on can complete meanwhile. */
const nextIoTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

const ids = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ event_id: string }>`SELECT event_id FROM webhook_events ORDER BY event_id`, (rows) => rows.map((r) => r.event_id))
)

layer(Stack)("webhook_events retention", (it) => {
  it.effect("what the queue is done with (settled, failed, left to a full pass, waiting for a reconnect) is pruned after WEBHOOK_EVENTS_RETENTION; events due never", () =>
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
      yield* insert("failed-recent", "failed", 29)
      yield* insert("deferred-old", "deferred", 90)
      // an account revoked for good: its events were kept for nothing (before: never pruned)
      yield* insert("waiting-old", "waiting-for-reconnect", 31)
      yield* insert("waiting-recent", "waiting-for-reconnect", 29)
      // applied long after it arrived (a retried event): kept for the retention after it was applied
      yield* sql`
        INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, applied_at)
        VALUES ('applied-late', 'JOB_UPDATE', 'app', 'acc', 'acc', 'item', ${daysAgo(40)}, ${daysAgo(40)}, 'applied', ${daysAgo(2)})`

      expect(yield* (yield* EventRetention).prune).toBe(6)
      expect(yield* ids).toEqual(["applied-late", "applied-recent", "failed-recent", "pending-old", "unmatched-recent", "waiting-recent"])
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

      // the loop is asleep (its next round scheduled): whatever a round before started has committed
      const asleep = Effect.gen(function* () {
        for (let turn = 0; turn < 20_000; turn++) {
          const at = yield* Clock.currentTimeMillis
          if (Chunk.some(yield* TestClock.sleeps(), (wake) => wake > at)) return
          yield* nextIoTurn
        }
        return yield* Effect.dieMessage("the retention loop never went back to sleep")
      })

      const fiber = yield* Effect.fork((yield* EventRetention).run)
      yield* gone("a")
      yield* asleep
      expect(yield* ids).toEqual(["b"])
      yield* TestClock.adjust(Duration.minutes(59))
      // a round started within the hour would have run (and slept again) by now: b is still there
      yield* asleep
      expect(yield* ids).toEqual(["b"])
      yield* TestClock.adjust(Duration.minutes(1))
      yield* gone("b")
      yield* asleep
      expect(yield* ids).toEqual([])
      yield* Fiber.interrupt(fiber)
    })
  )
})

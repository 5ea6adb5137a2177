import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Connections } from "../auth/Connections.js"
import { rowsOrDie } from "../db/rows.js"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import { EventQueue } from "../changes/EventQueue.js"
import { fullPassCadence, SyncSettings } from "../sync/SyncSettings.js"
import { nextDueAt } from "./DueSchedule.js"
import { type AccountJob, QueueNames } from "./JobKinds.js"
import { JobQueue, type QueueError } from "./JobQueue.js"
import { JobSettings } from "./JobSettings.js"

export interface TickReport {
  readonly sync: number
  readonly events: number
}

/**
 * What a tick of the schedule does: every active account whose sync is due (see DueSchedule) and that has no job
 * waiting or running gets a sync job, the most overdue first; every account with change events due and no events job
 * waiting gets one (the webhook receiver enqueues them as deliveries arrive: this catches what it could not).
 */
export class Scheduler extends Context.Tag("account-sync/Scheduler")<Scheduler, { readonly enqueueDue: Effect.Effect<TickReport, SqlError.SqlError | QueueError> }>() {}

const KeyRow = Schema.Struct({ key: Schema.String, kind: Schema.NullOr(Schema.String), state: Schema.String })

export const SchedulerLive = Layer.effect(
  Scheduler,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const connections = yield* Connections
    const checkpoints = yield* Checkpoints
    const events = yield* EventQueue
    const queue = yield* JobQueue
    const settings = yield* SyncSettings
    const jobSettings = yield* JobSettings
    const streams = settings.streams.defaults.map((stream) => ({ stream, fullPassEvery: fullPassCadence(settings, stream) }))

    /** The accounts with a job waiting or running, and which of those are events jobs that wait. */
    const busy = Effect.map(
      rowsOrDie(
        Effect.flatMap(
          sql`SELECT singleton_key AS key, data->>'kind' AS kind, state::text AS state FROM ${sql(queue.schema)}.job
              WHERE name = ${QueueNames.accounts} AND state IN ('created', 'retry', 'active') AND singleton_key IS NOT NULL`,
          Schema.decodeUnknown(Schema.Array(KeyRow))
        )
      ),
      (rows) => ({
        any: new Set(rows.map((r) => r.key)),
        eventsWaiting: new Set(rows.filter((r) => r.kind === "events" && r.state !== "active").map((r) => r.key))
      })
    )

    const enqueueDue = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const active = (yield* connections.list()).filter((c) => c.status === "active")
      const all = yield* checkpoints.all()
      const { any, eventsWaiting } = yield* busy
      const nowDate = new Date(now)
      const due = active
        .map((c) => ({ accountId: c.accountId, dueAt: nextDueAt({ streams, checkpoints: all.get(c.accountId), connectedAt: c.connectedAt, incrementalEvery: jobSettings.incrementalEvery, now: nowDate }) }))
        .filter((d) => d.dueAt.getTime() <= now && !any.has(d.accountId))
        .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
      const withEvents = (yield* events.accountsDue(nowDate)).filter((accountId) => !eventsWaiting.has(accountId))
      yield* queue.enqueueMany([
        ...due.map((d): AccountJob => ({ kind: "sync", accountId: d.accountId, dueAt: d.dueAt.toISOString() })),
        ...withEvents.map((accountId): AccountJob => ({ kind: "events", accountId, dueAt: nowDate.toISOString() }))
      ])
      if (due.length + withEvents.length > 0) yield* Effect.logInfo(`schedule: ${due.length} account(s) due for sync, ${withEvents.length} with change events enqueued`)
      return { sync: due.length, events: withEvents.length }
    }).pipe(Effect.withSpan("jobs.schedule"))

    return Scheduler.of({ enqueueDue })
  })
)

import type { SqlError } from "@effect/sql"
import { Clock, Config, Context, Duration, Effect, Layer, Schedule } from "effect"
import { EventQueue } from "./EventQueue.js"

/** How long settled webhook deliveries are kept (WEBHOOK_EVENTS_RETENTION), and how often serve prunes them. */
export const EventRetentionConfig = Config.all({
  retention: Config.duration("WEBHOOK_EVENTS_RETENTION").pipe(
    Config.withDefault(Duration.days(30)),
    Config.validate({
      message: "WEBHOOK_EVENTS_RETENTION: expected a duration of at least 1 hour, e.g. `30 days`",
      validation: (d) => Duration.greaterThanOrEqualTo(d, Duration.hours(1))
    })
  )
})

/** How often `serve` prunes. */
export const pruneEvery = Duration.hours(1)

/**
 * Keeps `webhook_events` bounded: what the queue is done with (settled, or waiting for a reconnect that has not come)
 * longer than the retention ago is deleted (EventQueue.prune); a redelivery of one after that is recorded and applied
 * again, which only reads the record again.
 */
export class EventRetention extends Context.Tag("account-sync/EventRetention")<
  EventRetention,
  {
    /** Deletes what is past the retention now; the number of rows deleted. */
    readonly prune: Effect.Effect<number, SqlError.SqlError>
    /** `prune` at once and then every hour, for as long as it runs (serve); a failed round is logged and retried. */
    readonly run: Effect.Effect<never>
  }
>() {}

export const EventRetentionLive = Layer.effect(
  EventRetention,
  Effect.gen(function* () {
    const queue = yield* EventQueue
    const { retention } = yield* EventRetentionConfig

    const prune = Effect.gen(function* () {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(retention))
      const total = yield* queue.prune(cutoff)
      if (total > 0) yield* Effect.logInfo(`pruned ${total} webhook deliveries done with before ${cutoff.toISOString()} (WEBHOOK_EVENTS_RETENTION)`)
      return total
    })

    const run = prune.pipe(
      Effect.catchAll((e) => Effect.logWarning("pruning webhook_events failed; tried again in an hour", e)),
      Effect.repeat(Schedule.spaced(pruneEvery)),
      Effect.andThen(Effect.never)
    )

    return EventRetention.of({ prune, run })
  })
)

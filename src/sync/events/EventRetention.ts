import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Config, Context, Duration, Effect, Layer, Schedule } from "effect"

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

/** Rows taken per DELETE, so a large backlog is pruned in short statements. */
const batch = 5_000

/**
 * The states a delivery is done with: applied (or APP_DISCONNECT applied at once), ignored (a topic no stream takes)
 * and unmatched (an account no connection matched). Pending, failed and deferred ones are never pruned.
 */
export const prunableStates = ["applied", "ignored", "unmatched"] as const

/**
 * Keeps `webhook_events` bounded: deliveries settled longer than the retention ago are deleted (a redelivery of
 * one after that is recorded and applied again, which only reads the record again).
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
    const sql = yield* SqlClient.SqlClient
    const { retention } = yield* EventRetentionConfig

    const pruneBatch = (cutoff: Date) =>
      sql<{ event_id: string }>`
        DELETE FROM webhook_events WHERE event_id IN (
          SELECT event_id FROM webhook_events
          WHERE state IN ${sql.in(prunableStates)} AND coalesce(applied_at, received_at) < ${cutoff}
          LIMIT ${batch})
        RETURNING event_id`.pipe(Effect.map((rows) => rows.length))

    const prune = Effect.gen(function* () {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(retention))
      let total = 0
      for (;;) {
        const deleted = yield* pruneBatch(cutoff)
        total += deleted
        if (deleted < batch) break
      }
      if (total > 0) yield* Effect.logInfo(`pruned ${total} webhook deliveries settled before ${cutoff.toISOString()} (WEBHOOK_EVENTS_RETENTION)`)
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

import { Config, Context, Duration, Layer } from "effect"

/** How the change-event consumer works through the queue (EVENTS_* keys, see config/.env.example). */
export const EventSettingsConfig = Config.all({
  /** Accounts whose events are applied at once. */
  // one account at a time by default: the re-fetches of a change are small, and more at once take the CPU serve's
  // webhook answers need on a small machine (answer p99 about twice as long at 4; docs/performance.md, "Change events")
  concurrency: Config.integer("EVENTS_CONCURRENCY").pipe(
    Config.withDefault(1),
    Config.validate({ message: "EVENTS_CONCURRENCY: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  /** How often `serve` looks for due events. */
  pollInterval: Config.duration("EVENTS_POLL_INTERVAL").pipe(Config.withDefault(Duration.millis(500))),
  /** Attempts before an event is given up on (left `failed`, visible in `status`). */
  maxAttempts: Config.integer("EVENTS_MAX_ATTEMPTS").pipe(
    Config.withDefault(8),
    Config.validate({ message: "EVENTS_MAX_ATTEMPTS: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  /** The first retry's delay; each next one doubles (jittered), up to ten minutes. */
  retryBase: Config.duration("EVENTS_RETRY_BASE").pipe(Config.withDefault(Duration.seconds(5)))
})
export type EventSettingsShape = Config.Config.Success<typeof EventSettingsConfig>

export class EventSettings extends Context.Tag("account-sync/EventSettings")<EventSettings, EventSettingsShape>() {
  static readonly layer = Layer.effect(EventSettings, EventSettingsConfig)
}

/** The delay before attempt `attempts + 1`: base x 2^attempts, at most ten minutes, times a jitter in [0.8, 1.2). */
export const retryDelay = (base: Duration.Duration, attempts: number, jitter: number): Duration.Duration =>
  Duration.millis(Math.min(Duration.toMillis(base) * 2 ** attempts, 600_000) * (0.8 + 0.4 * jitter))

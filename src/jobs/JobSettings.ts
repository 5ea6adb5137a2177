import { Config, Context, Duration, Layer } from "effect"

const atLeast = (name: string, min: number, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: expected a whole number of at least ${min}`, validation: (n) => n >= min })
  )

const positive = (name: string, fallback: Duration.Duration) =>
  Config.duration(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: expected a duration above zero, e.g. 5 minutes`, validation: (d) => Duration.toMillis(d) > 0 })
  )

/** How the job queue (pg-boss in the warehouse's Postgres) spreads accounts over workers (QUEUE_* keys, see config/.env.example). */
export const JobSettingsConfig = Config.all({
  /**
   * `account-sync worker` processes run against this database: serve and `connect` enqueue jobs (a new connection's
   * backfill, an account's change events) instead of applying events themselves.
   */
  workers: Config.boolean("WORKERS").pipe(Config.withDefault(false)),
  /** pg-boss's own schema (default: DB_SCHEMA with `_queue` after it, so deployments sharing a database stay apart). */
  schema: Config.option(Config.string("QUEUE_SCHEMA")),
  /**
   * A job works this long on its account, lands the pages it fetched, then leaves the rest to a follow-up job of the
   * same account.
   */
  slice: positive("QUEUE_SLICE", Duration.minutes(5)),
  /**
   * A worker refreshes the heartbeat of its jobs every third of this; pg-boss fails (and retries elsewhere) a job
   * whose heartbeat is older. pg-boss takes at least 10 s. With QUEUE_MONITOR_EVERY this bounds failover.
   */
  heartbeatSeconds: atLeast("QUEUE_HEARTBEAT_SECONDS", 10, 10),
  /** How often pg-boss's supervisor looks for jobs with a stale heartbeat or past their expiry (default 10 s). */
  monitorSeconds: atLeast("QUEUE_MONITOR_SECONDS", 1, 10),
  /** How often an idle worker asks for jobs. */
  pollInterval: positive("QUEUE_POLL_INTERVAL", Duration.seconds(1)),
  /**
   * Accounts a worker holds in flight (jobs claimed): an account waiting for its query-cost bucket holds no slot of
   * the worker's concurrency, which bounds the CPU work in hand (pages fetched, parsed and landed at once), not these.
   * Bounded by memory: a few hundred kB each at most.
   */
  accountsInFlight: atLeast("QUEUE_ACCOUNTS_IN_FLIGHT", 1, 1000),
  /** Backfill jobs running at once across every worker (they are what loads the warehouse). */
  backfillsAtOnce: atLeast("QUEUE_BACKFILLS_AT_ONCE", 1, 4),
  /** Attempts after the first before a failing job goes to the dead-letter queue. */
  retryLimit: atLeast("QUEUE_RETRY_LIMIT", 0, 5),
  /** The first retry's delay, doubled each time (pg-boss jitters it), at most QUEUE_RETRY_DELAY_MAX. */
  retryDelaySeconds: atLeast("QUEUE_RETRY_DELAY_SECONDS", 1, 5),
  retryDelayMaxSeconds: atLeast("QUEUE_RETRY_DELAY_MAX_SECONDS", 1, 600),
  /** The schedule's cron line (pg-boss sends one tick per occurrence across every instance): accounts due are enqueued. */
  cron: Config.string("QUEUE_SCHEDULE").pipe(Config.withDefault("* * * * *")),
  /** An account's incremental passes are due this long after its last one (its full passes: SYNC_FULL_PASS_EVERY). */
  incrementalEvery: positive("SYNC_INCREMENTAL_EVERY", Duration.minutes(15))
})
export type JobSettingsShape = Config.Config.Success<typeof JobSettingsConfig>

export class JobSettings extends Context.Tag("account-sync/JobSettings")<JobSettings, JobSettingsShape>() {
  static readonly layer = Layer.effect(JobSettings, JobSettingsConfig)
}

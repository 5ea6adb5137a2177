import { Config, Context, Duration, Layer, Option } from "effect"
import { DatabaseConfig } from "../config.js"

export interface SyncSettingsShape {
  /** Accounts synced at once. */
  readonly concurrency: number
  /** A `sync` runs a full pass of a stream when its last one is older than this (repairs moves and deletions). */
  readonly fullPassEvery: Duration.Duration
  /** An incremental pass reads back this far before the high-water mark (clock skew, same-second updates). */
  readonly incrementalOverlap: Duration.Duration
  /**
   * Fetch the next pages (up to `prefetchPages`) while the current batch lands; the pages that queued up meanwhile
   * land together in one statement. Off on the embedded Postgres (see forDatabase).
   */
  readonly prefetch: boolean
  /** The database serves every connection from one session (embedded): one account at a time, whatever is asked. */
  readonly singleSession: boolean
}

export class SyncSettings extends Context.Tag("account-sync/SyncSettings")<SyncSettings, SyncSettingsShape>() {}

export const defaultSyncSettings: SyncSettingsShape = {
  concurrency: 4,
  fullPassEvery: Duration.days(1),
  incrementalOverlap: Duration.minutes(5),
  prefetch: true,
  singleSession: false
}

/**
 * On the embedded Postgres (PGlite) one session serves every connection, and statements of two connections in
 * flight at once can take each other's prepared statement or portal: there, one account at a time and no page
 * fetched ahead, so that statements never overlap.
 */
export const forDatabase = (settings: SyncSettingsShape, embedded: boolean): SyncSettingsShape =>
  embedded ? { ...settings, concurrency: 1, prefetch: false, singleSession: true } : settings

export const SyncSettingsConfig = Config.all({
  concurrency: Config.integer("SYNC_CONCURRENCY").pipe(
    Config.withDefault(defaultSyncSettings.concurrency),
    Config.validate({ message: "SYNC_CONCURRENCY: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  fullPassEvery: Config.duration("SYNC_FULL_PASS_EVERY").pipe(Config.withDefault(defaultSyncSettings.fullPassEvery)),
  incrementalOverlap: Config.duration("SYNC_INCREMENTAL_OVERLAP").pipe(Config.withDefault(defaultSyncSettings.incrementalOverlap)),
  prefetch: Config.succeed(defaultSyncSettings.prefetch),
  singleSession: Config.succeed(false),
  embedded: Config.map(DatabaseConfig, (db) => Option.isNone(db.url))
}).pipe(Config.map(({ embedded, ...settings }) => forDatabase(settings, embedded)))

export const SyncSettingsFromEnv = Layer.effect(SyncSettings, SyncSettingsConfig)

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
   * The database serves every connection from one session (the embedded Postgres, PGlite), where statements of two
   * connections in flight at once can take each other's prepared statement or portal. Then statements never
   * overlap: one account at a time whatever is asked, and no page fetched ahead. Otherwise the next pages (up to
   * `prefetchPages`) are fetched while the current batch lands.
   */
  readonly singleSession: boolean
}

export class SyncSettings extends Context.Tag("account-sync/SyncSettings")<SyncSettings, SyncSettingsShape>() {}

export const defaultSyncSettings: SyncSettingsShape = {
  concurrency: 4,
  fullPassEvery: Duration.days(1),
  incrementalOverlap: Duration.minutes(5),
  singleSession: false
}

export const SyncSettingsConfig = Config.all({
  concurrency: Config.integer("SYNC_CONCURRENCY").pipe(
    Config.withDefault(defaultSyncSettings.concurrency),
    Config.validate({ message: "SYNC_CONCURRENCY: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  fullPassEvery: Config.duration("SYNC_FULL_PASS_EVERY").pipe(Config.withDefault(defaultSyncSettings.fullPassEvery)),
  incrementalOverlap: Config.duration("SYNC_INCREMENTAL_OVERLAP").pipe(Config.withDefault(defaultSyncSettings.incrementalOverlap)),
  singleSession: Config.map(DatabaseConfig, (db) => Option.isNone(db.url))
})

export const SyncSettingsFromEnv = Layer.effect(SyncSettings, SyncSettingsConfig)

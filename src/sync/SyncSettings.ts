import { Config, Context, Duration, Layer } from "effect"

export interface SyncSettingsShape {
  /** Accounts synced at once. */
  readonly concurrency: number
  /** A `sync` runs a full pass of a stream when its last one is older than this (repairs moves and deletions). */
  readonly fullPassEvery: Duration.Duration
  /** An incremental pass reads back this far before the high-water mark (clock skew, same-second updates). */
  readonly incrementalOverlap: Duration.Duration
}

export const defaultSyncSettings: SyncSettingsShape = {
  concurrency: 4,
  fullPassEvery: Duration.days(1),
  incrementalOverlap: Duration.minutes(5)
}

export const SyncSettingsConfig = Config.all({
  concurrency: Config.integer("SYNC_CONCURRENCY").pipe(
    Config.withDefault(defaultSyncSettings.concurrency),
    Config.validate({ message: "SYNC_CONCURRENCY: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  fullPassEvery: Config.duration("SYNC_FULL_PASS_EVERY").pipe(Config.withDefault(defaultSyncSettings.fullPassEvery)),
  incrementalOverlap: Config.duration("SYNC_INCREMENTAL_OVERLAP").pipe(Config.withDefault(defaultSyncSettings.incrementalOverlap))
})

/** How `sync` schedules passes and accounts (SYNC_CONCURRENCY, SYNC_FULL_PASS_EVERY, SYNC_INCREMENTAL_OVERLAP). */
export class SyncSettings extends Context.Tag("account-sync/SyncSettings")<SyncSettings, SyncSettingsShape>() {
  static readonly layer = Layer.effect(SyncSettings, SyncSettingsConfig)
}

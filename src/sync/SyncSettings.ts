import { Config, Context, Duration, Layer, Option } from "effect"
import type { AnyStream } from "./streams/Stream.js"
import { type StreamSelection, StreamSelectionConfig } from "./StreamSelection.js"

export interface SyncSettingsShape {
  /** Accounts synced at once. */
  readonly concurrency: number
  /** A `sync` runs a full pass of a stream when its last one is older than this (repairs moves and deletions). */
  readonly fullPassEvery: Duration.Duration
  /** An incremental pass reads back this far before the high-water mark (clock skew, same-second updates). */
  readonly incrementalOverlap: Duration.Duration
  /** Which streams, with which fields, on which cadence. */
  readonly streams: StreamSelection
  /**
   * While a stream's change events flow for an account (one arrived within this time), `sync` runs its incremental
   * pass only when the last one is older than this: the events keep it fresh, the pass reconciles. 0: always.
   */
  readonly incrementalEveryWithEvents: Duration.Duration
  /** How often `sync` is scheduled (cron): how often a stream with incremental access can be made current. */
  readonly syncEvery: Duration.Duration
  /** A stream is stale when its data was last known current longer ago than its cadence plus this. */
  readonly staleMargin: Duration.Duration
}

export const SyncSettingsConfig = Config.all({
  concurrency: Config.integer("SYNC_CONCURRENCY").pipe(
    Config.withDefault(4),
    Config.validate({ message: "SYNC_CONCURRENCY: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  fullPassEvery: Config.duration("SYNC_FULL_PASS_EVERY").pipe(Config.withDefault(Duration.days(1))),
  incrementalOverlap: Config.duration("SYNC_INCREMENTAL_OVERLAP").pipe(Config.withDefault(Duration.minutes(5))),
  streams: StreamSelectionConfig(),
  incrementalEveryWithEvents: Config.duration("SYNC_INCREMENTAL_EVERY_WITH_EVENTS").pipe(Config.withDefault(Duration.hours(1))),
  syncEvery: Config.duration("SYNC_EVERY").pipe(Config.withDefault(Duration.minutes(15))),
  staleMargin: Config.duration("SYNC_STALE_MARGIN").pipe(Config.withDefault(Duration.hours(1)))
})

/** A stream's full-pass cadence: its SYNC_FULL_PASS_EVERY_<STREAM>, else its definition's, else SYNC_FULL_PASS_EVERY. */
export const fullPassCadence = (settings: SyncSettingsShape, stream: AnyStream): Duration.Duration =>
  settings.streams.fullPassEvery.get(stream.name) ?? stream.fullPassEvery ?? settings.fullPassEvery

/**
 * How often a stream's data is made current when all goes well: its full-pass cadence when it has no incremental
 * access; else the sync schedule, or, while its change events flow (they keep it current), the incremental pass's
 * cadence with events when that is longer.
 */
export const currentCadence = (settings: SyncSettingsShape, stream: AnyStream): Duration.Duration =>
  Option.isNone(stream.incremental.plan(new Date(0)))
    ? fullPassCadence(settings, stream)
    : stream.topic === undefined
      ? settings.syncEvery
      : Duration.max(settings.syncEvery, settings.incrementalEveryWithEvents)

/** How long after it was last known current a stream's data counts as stale: its cadence plus SYNC_STALE_MARGIN. */
export const staleAfter = (settings: SyncSettingsShape, stream: AnyStream): Duration.Duration =>
  Duration.sum(currentCadence(settings, stream), settings.staleMargin)

/** The streams a request names (the configured ones by default), in registry order, with the configured exclusions. */
export const selectStreams = (settings: SyncSettingsShape, names: ReadonlyArray<string> | undefined): ReadonlyArray<AnyStream> =>
  names && names.length > 0 ? settings.streams.catalog.filter((s) => names.includes(s.name)) : settings.streams.defaults

/** How `sync` schedules passes, accounts and streams (SYNC_* keys, see config/.env.example). */
export class SyncSettings extends Context.Tag("account-sync/SyncSettings")<SyncSettings, SyncSettingsShape>() {
  static readonly layer = Layer.effect(SyncSettings, SyncSettingsConfig)
}

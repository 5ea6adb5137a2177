import { NodeHttpClient } from "@effect/platform-node"
import { Array as Arr, ConfigError, Effect, Layer } from "effect"
import type { CostBudget } from "../api/CostBudget.js"
import { ServiceEndpoint } from "../api/ServiceEndpoint.js"
import { AuthServicesLive } from "./AuthLive.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { TokenKey, TokenKeySettings } from "../auth/TokenKey.js"
import { DatabaseConfig, OAuthClientConfig, ServiceEndpointConfig } from "../config.js"
import { MigratedDatabaseLive } from "../db/Database.js"
import { applyHistory } from "../sync/history/History.js"
import { HistoryConfig } from "../sync/history/HistorySetting.js"
import { AlertsLive } from "../health/AlertWebhook.js"
import { HealthMetricsLive } from "../health/healthMetrics.js"
import { HealthLive } from "../health/Health.js"
import type { Progress } from "../run/Progress.js"
import { ProgressAuto } from "./live/progressAuto.js"
import { makeSyncEngine } from "../run/SyncEngine.js"
import { EventRetentionConfig } from "../changes/EventRetention.js"
import { EventSettingsConfig } from "../changes/EventSettings.js"
import { SyncSettings, SyncSettingsConfig } from "../sync/SyncSettings.js"

/**
 * The one assembly of the application's layers, every setting read through Effect's Config (the environment, a
 * `.env` file, or a ConfigProvider the caller installs: the demo and the tests feed theirs this way).
 */

/**
 * Loads every setting a command needs before any of its layers opens or creates anything (an embedded database, a
 * key file): a configuration error leaves nothing behind, and every bad key is reported at once.
 */
export const settingsFirst = (...settings: ReadonlyArray<Effect.Effect<unknown, ConfigError.ConfigError>>) =>
  Layer.effectDiscard(
    Effect.all(settings, { mode: "validate" }).pipe(Effect.mapError((errors) => Arr.getSomes(errors).reduce((a, b) => ConfigError.And(a, b))))
  )

/** The migrated database named by DATABASE_URL / DATA_DIR / DB_SCHEMA. */
export const DatabaseLayer = MigratedDatabaseLive.pipe(Layer.provideMerge(settingsFirst(DatabaseConfig)))

/**
 * Connecting, tokens, disconnects and webhooks: the auth services over the database and the service. `database` is
 * the migrated database by default; a test gives one as an older version left it (DatabaseLive, not migrated).
 */
export const makeAuthLayer = (database: typeof MigratedDatabaseLive = MigratedDatabaseLive) =>
  AuthServicesLive.pipe(
    Layer.provideMerge(Layer.mergeAll(OAuthClient.layer, TokenKey.layer, ServiceEndpoint.layer, NodeHttpClient.layerUndici)),
    Layer.provideMerge(database),
    Layer.provideMerge(settingsFirst(DatabaseConfig, OAuthClientConfig, ServiceEndpointConfig, TokenKeySettings))
  )

export const AuthLayer = makeAuthLayer()

/** SYNC_HISTORY applied to the schema before anything lands (see sync/history/History.ts). */
const HistoryLive = Layer.effectDiscard(Effect.flatMap(HistoryConfig(), applyHistory))

export interface SyncLayerOptions {
  /** Where runs report progress (default: live lines on a terminal, log lines otherwise). */
  readonly progress?: Layer.Layer<Progress>
  /** The cost budget (default: the account's bucket mirrored; the benchmarks compare another). */
  readonly budget?: Layer.Layer<CostBudget>
  /** The database (default: migrated at start). */
  readonly database?: typeof MigratedDatabaseLive
}

/**
 * `sync`, `backfill` and everything that runs them: the sync engine over the auth services, and what watches it
 * (the state gauges of /metrics and METRICS_FILE, the alert webhook).
 */
export const makeSyncLayer = (options: SyncLayerOptions = {}) =>
  Layer.merge(HealthMetricsLive, AlertsLive).pipe(
    Layer.provideMerge(HealthLive),
    Layer.provideMerge(makeSyncEngine(options.budget)),
    Layer.provideMerge(HistoryLive),
    Layer.provideMerge(Layer.mergeAll(options.progress ?? ProgressAuto, SyncSettings.layer)),
    Layer.provideMerge(options.database === undefined ? AuthLayer : makeAuthLayer(options.database)),
    Layer.provideMerge(settingsFirst(SyncSettingsConfig, EventSettingsConfig, EventRetentionConfig, HistoryConfig()))
  )

export const SyncLayer = makeSyncLayer()

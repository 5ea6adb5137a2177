import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import type { CostBudget } from "../api/CostBudget.js"
import { ServiceEndpoint } from "../api/ServiceEndpoint.js"
import { AuthServicesLive } from "../auth/AuthLive.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { TokenKey } from "../auth/TokenKey.js"
import { MigratedDatabaseLive } from "../db/Database.js"
import { type Progress, ProgressAuto } from "../sync/Progress.js"
import { makeSyncEngine } from "../sync/SyncEngine.js"
import { SyncSettings } from "../sync/SyncSettings.js"

/**
 * The one assembly of the application's layers, every setting read through Effect's Config (the environment, a
 * `.env` file, or a ConfigProvider the caller installs: the demo and the tests feed theirs this way).
 */

/** The migrated database named by DATABASE_URL / DATA_DIR / DB_SCHEMA. */
export const DatabaseLayer = MigratedDatabaseLive

/** Connecting, tokens, disconnects and webhooks: the auth services over the database and the service. */
export const AuthLayer = AuthServicesLive.pipe(
  Layer.provideMerge(Layer.mergeAll(OAuthClient.layer, TokenKey.layer, ServiceEndpoint.layer, NodeHttpClient.layerUndici)),
  Layer.provideMerge(DatabaseLayer)
)

export interface SyncLayerOptions {
  /** Where runs report progress (default: live lines on a terminal, log lines otherwise). */
  readonly progress?: Layer.Layer<Progress>
  /** The cost budget (default: the account's bucket mirrored; the benchmarks compare another). */
  readonly budget?: Layer.Layer<CostBudget>
}

/** `sync`, `backfill` and everything that runs them: the sync engine over the auth services. */
export const makeSyncLayer = (options: SyncLayerOptions = {}) =>
  makeSyncEngine(options.budget).pipe(
    Layer.provideMerge(Layer.mergeAll(options.progress ?? ProgressAuto, SyncSettings.layer)),
    Layer.provideMerge(AuthLayer)
  )

export const SyncLayer = makeSyncLayer()

import { Layer } from "effect"
import { CostBudgetLive } from "../api/CostBudget.js"
import { ServiceClientLive } from "../api/ServiceClient.js"
import { AuthLive } from "../auth/AuthLive.js"
import { ProgressAuto } from "./Progress.js"
import { RunsLive } from "./Runs.js"
import { SyncRunnerLive } from "./SyncRunner.js"
import { SyncSettingsFromEnv } from "./SyncSettings.js"
import { WarehouseLive } from "./Warehouse.js"

/** The sync engine over a SqlClient, Connections, AccessTokens, ServiceSettings and an HttpClient. */
export const SyncEngineLive = SyncRunnerLive.pipe(
  Layer.provideMerge(Layer.mergeAll(ServiceClientLive, WarehouseLive, RunsLive)),
  Layer.provideMerge(CostBudgetLive)
)

/** What `sync` and `backfill` run on: migrated database, auth from the environment, progress on stderr. */
export const SyncAppLive = SyncEngineLive.pipe(
  Layer.provide(Layer.mergeAll(ProgressAuto, SyncSettingsFromEnv)),
  Layer.provideMerge(AuthLive)
)

import { Layer } from "effect"
import { type CostBudget, CostBudgetLive } from "../api/CostBudget.js"
import { ServiceClientLive } from "../api/ServiceClient.js"
import { AccountLocksLive } from "./AccountLocks.js"
import { CheckpointsLive } from "./Checkpoints.js"
import { PagerLive } from "./Pager.js"
import { PassEndLive } from "./PassEnd.js"
import { RunsLive } from "./Runs.js"
import { StreamRunLive } from "./StreamRun.js"
import { SyncRunnerLive } from "./SyncRunner.js"
import { WarehouseLive } from "./Warehouse.js"

/**
 * The sync engine's services (SyncRunner and everything under it), over a database (SqlClient, PreparedStatements,
 * DatabaseTopology), the service endpoint and an HttpClient, the auth services (Connections, AccessTokens), Progress
 * and SyncSettings. `budget` replaces the cost budget (the benchmarks' reactive baseline does).
 */
export const makeSyncEngine = (budget: Layer.Layer<CostBudget> = CostBudgetLive) =>
  SyncRunnerLive.pipe(
    Layer.provideMerge(StreamRunLive),
    Layer.provideMerge(PassEndLive),
    Layer.provideMerge(Layer.mergeAll(WarehouseLive, PagerLive, RunsLive, AccountLocksLive)),
    Layer.provideMerge(CheckpointsLive),
    Layer.provideMerge(ServiceClientLive),
    Layer.provideMerge(budget)
  )

export const SyncEngineLive = makeSyncEngine()

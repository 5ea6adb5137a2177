import { Layer } from "effect"
import { type CostBudget, CostBudgetLive } from "../api/CostBudget.js"
import { ApiVersionLogLive } from "../api/ApiVersionLog.js"
import { ServiceClientLive } from "../api/ServiceClient.js"
import { AccountHealthLive } from "./AccountHealth.js"
import { AccountLeasesLive } from "../sync/AccountLeases.js"
import { CheckpointsLive } from "../sync/pass/Checkpoints.js"
import { DependentsLive } from "../sync/pass/Dependents.js"
import { EventConsumerLive } from "../changes/EventConsumer.js"
import { EventRetentionLive } from "../changes/EventRetention.js"
import { EventSettings } from "../changes/EventSettings.js"
import { PagerLive } from "../sync/paging/Pager.js"
import { PassEndLive } from "../sync/pass/PassEnd.js"
import { RunsLive } from "./Runs.js"
import { StreamRunLive } from "./StreamRun.js"
import { SyncRunnerLive } from "./SyncRunner.js"
import { WarehouseLive } from "../sync/landing/Warehouse.js"

/**
 * The sync engine's services (SyncRunner, EventConsumer, EventRetention and everything under them), over a database (SqlClient, PreparedStatements,
 * DatabaseTopology), the service endpoint and an HttpClient, the auth services (Connections, AccessTokens), the EventQueue, Progress
 * and SyncSettings. `budget` replaces the cost budget (the benchmarks' reactive baseline does).
 */
export const makeSyncEngine = (budget: Layer.Layer<CostBudget> = CostBudgetLive) =>
  Layer.mergeAll(SyncRunnerLive, EventRetentionLive).pipe(
    // a pass applies its account's change events between two pages (events/betweenPages.ts)
    Layer.provideMerge(StreamRunLive),
    Layer.provideMerge(EventConsumerLive),
    Layer.provideMerge(Layer.mergeAll(PassEndLive, DependentsLive, EventSettings.layer)),
    Layer.provideMerge(Layer.mergeAll(WarehouseLive, PagerLive, RunsLive, AccountLeasesLive, AccountHealthLive)),
    Layer.provideMerge(CheckpointsLive),
    Layer.provideMerge(Layer.merge(ServiceClientLive, ApiVersionLogLive)),
    Layer.provideMerge(budget)
  )

export const SyncEngineLive = makeSyncEngine()

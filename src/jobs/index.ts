import { Layer } from "effect"
import { AccountWorkLive } from "./AccountWork.js"
import { JobQueueLive, type JobQueueOptions } from "./JobQueue.js"
import { JobSettings } from "./JobSettings.js"
import { SchedulerLive } from "./Scheduler.js"
import { WorkerLive } from "./Worker.js"

/** The queue side of the engine over the sync engine's services: the queue (pg-boss), the schedule, the worker loop. */
export const makeJobsLayer = (options: JobQueueOptions) =>
  WorkerLive.pipe(
    Layer.provideMerge(Layer.mergeAll(AccountWorkLive, SchedulerLive)),
    Layer.provideMerge(JobQueueLive(options)),
    Layer.provideMerge(JobSettings.layer)
  )

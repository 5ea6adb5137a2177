import { Effect } from "effect"
import { aWorkerThatStopsAnswering } from "../../support/hungWorker.js"

aWorkerThatStopsAnswering({
  name: "SIGSTOP longer than its heartbeat, then SIGCONT",
  setUp: (settings) =>
    Effect.succeed({
      env: settings,
      stop: (worker) => Effect.sync(() => void worker.kill("SIGSTOP")),
      resume: (worker) => Effect.sync(() => void worker.kill("SIGCONT"))
    })
})

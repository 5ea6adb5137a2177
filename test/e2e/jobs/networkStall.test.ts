import { Effect } from "effect"
import { aWorkerThatStopsAnswering } from "../../support/hungWorker.js"
import { tcpProxy } from "../../support/tcpProxy.js"

aWorkerThatStopsAnswering({
  name: "its network to Postgres stalled (a TCP proxy that stops forwarding), then forwarding again",
  setUp: (settings) =>
    Effect.gen(function* () {
      const database = new URL(settings.DATABASE_URL!)
      const proxy = yield* tcpProxy({ host: database.hostname, port: Number(database.port || "5432") })
      database.port = String(proxy.port)
      return { env: { ...settings, DATABASE_URL: database.toString() }, stop: () => proxy.stall, resume: () => proxy.resume }
    })
})

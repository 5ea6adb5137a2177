import { SqlClient } from "@effect/sql"
import { Duration, Effect, Scope } from "effect"
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as net from "node:net"
import { estimateQueryCost } from "../../src/api/costEstimate.js"
import type { EmulatorAdmin, WebhookDeliveryInfo } from "../../src/emulator/EmulatorAdmin.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"
import type { Env } from "./connector.js"
import { BenchError } from "./errors.js"
import { binPath, nodeArgs, nodeEnv, stopChild } from "./emulatorProcess.js"

export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Polls `check` every 100 ms until it gives true, for at most `limitMs`. */
export const waitUntil = <E, R>(step: string, check: Effect.Effect<boolean, E, R>, limitMs: number) =>
  Effect.gen(function* () {
    const started = performance.now()
    while (!(yield* check)) {
      if (performance.now() - started > limitMs) return yield* new BenchError({ step, reason: `not within ${limitMs / 1000} s` })
      yield* Effect.sleep(Duration.millis(100))
    }
  })

/** `account-sync <args>` as a child until the scope closes; the tail of its stderr. */
export const startCommand = (args: ReadonlyArray<string>, env: Env) =>
  Effect.gen(function* () {
    let tail = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const c = spawn(process.execPath, [...nodeArgs, binPath, ...args], { env: { ...process.env, ...nodeEnv, LOG_LEVEL: "WARN", ...env }, stdio: ["ignore", "ignore", "pipe"] })
        c.stderr!.on("data", (chunk: Buffer) => void (tail = (tail + chunk.toString()).slice(-4000)))
        return c
      }),
      stopChild
    )
    return { child, tail: () => tail }
  })

/** `account-sync serve` as a child on `port` until the scope closes; ready once /healthz answers. */
export const startServe = (env: Env, port: number): Effect.Effect<void, BenchError, Scope.Scope> =>
  Effect.gen(function* () {
    const { child, tail } = yield* startCommand(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
    yield* waitUntil(
      "serve start",
      Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false
        )
      ).pipe(Effect.flatMap((ok) => (child.exitCode !== null ? new BenchError({ step: "serve start", reason: `exited with ${child.exitCode}: ${tail()}` }) : Effect.succeed(ok)))),
      60_000
    )
  })

export const pointsOf = (admin: EmulatorAdmin, ids: ReadonlyArray<string>) =>
  Effect.map(admin.stats(), (s) => ids.reduce((sum, id) => sum + (s.costPointsByAccount[id] ?? 0), 0))

/** Every delivery after the first `from` answered (2xx); none given up on. */
export const deliveredSince = (admin: EmulatorAdmin, from: number) =>
  waitUntil(
    "webhook deliveries",
    Effect.flatMap(admin.webhookDeliveries(), (all) => {
      const failed = all.slice(from).find((d) => d.status === "failed")
      if (failed) return new BenchError({ step: "webhook deliveries", reason: `${failed.id} failed: ${failed.lastError ?? ""}` })
      return Effect.succeed(all.slice(from).every((d) => d.status === "delivered"))
    }),
    120_000
  )

/** No change event waiting or failed in the connector's queue. */
export const queueDrained = waitUntil(
  "change events applied",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ state: string; n: number }>`SELECT state, count(*)::int AS n FROM webhook_events WHERE state IN ('pending', 'failed', 'deferred') GROUP BY state`
    const failed = rows.find((r) => r.state !== "pending")
    if (failed) return yield* new BenchError({ step: "change events", reason: `${failed.n} event(s) ${failed.state}` })
    return rows.length === 0
  }),
  120_000
)

/**
 * The deliveries answered 2xx whose event has no row in webhook_events. The event's id is the one the inbox gives it
 * (the hash of what it says): two deliveries of the same item in the same second are one event.
 */
export const notRecorded = (deliveries: ReadonlyArray<WebhookDeliveryInfo>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = new Set(
      deliveries
        .filter((d) => d.status === "delivered")
        .map((d) => {
          const e = (JSON.parse(d.body) as { data: { webHookEvent: Record<string, string> } }).data.webHookEvent
          return crypto.createHash("sha256").update([e.topic, e.appId, e.accountId, e.itemId, e.occuredAt].join("|")).digest("hex")
        })
    )
    if (ids.size === 0) return 0
    const found = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE event_id IN ${sql.in([...ids])}`
    return ids.size - (found[0]?.n ?? 0)
  })

export const answerTimes = (deliveries: ReadonlyArray<WebhookDeliveryInfo>) => deliveries.flatMap((d) => (d.answerMs === undefined ? [] : [d.answerMs]))

/** What one job costs in a page (its fields; the query's own point not counted). */
export const nodeCostOf = () => estimateQueryCost(jobScalarsStream.document, { first: 1, offset: 0 }) - 1

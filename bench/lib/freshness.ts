import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Fiber, Scope } from "effect"
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as net from "node:net"
import { estimateQueryCost } from "../../src/api/costEstimate.js"
import type { EmulatorAdmin, WebhookDeliveryInfo } from "../../src/emulator/EmulatorAdmin.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"
import { SyncRunner } from "../../src/run/SyncRunner.js"
import { connectAndBackfill, newAccount, unlimited } from "./benchmarks.js"
import { childEnv, connectAccount, connectorLayer, type Env, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { type DuringBackfillResult, duringBackfillLags } from "./freshnessDuringBackfill.js"
import { binPath, nodeArgs, nodeEnv, type EmulatorProcess, stopChild } from "./emulatorProcess.js"
import { quantile } from "./quantile.js"

/**
 * Freshness: how soon an edit at the service is in the warehouse, and at what cost, with the service's webhooks
 * driving `serve`'s consumer, against polling every 15 minutes. See bench/README.md for the method.
 */

export interface FreshnessOptions {
  readonly accounts: number
  readonly jobsPerAccount: number
  /** The steady stream of edits: this many per second, spread over the accounts in turn, for `seconds`. */
  readonly editsPerSecond: number
  readonly seconds: number
  /** The burst that measures the webhook answer time: this many deliveries per second for `burstSeconds`. */
  readonly burstPerSecond: number
  readonly burstSeconds: number
  /**
   * The load the burst is answered under: this many `worker` processes (WORKERS=true, serve enqueuing for them) each
   * backfilling an account of `burstLoadJobs` jobs (~200 rows/s each) on the same Postgres.
   */
  readonly burstLoadWorkers: number
  readonly burstLoadJobs: number
}

export interface FreshnessResult {
  readonly accounts: number
  readonly jobsPerAccount: number
  readonly editsPerSecond: number
  readonly seconds: number
  readonly edits: number
  /** Distinct jobs edited in the steady phase. */
  readonly changedRows: number
  /** Event-to-warehouse lag: from the edit (the admin call) to the row landed (its synced_at), over the changed rows. */
  readonly p50Seconds: number
  readonly p99Seconds: number
  readonly maxSeconds: number
  /** Points the service charged the consumer in the steady phase, per changed row. */
  readonly pointsPerChangedRow: number
  readonly points: number
  /** What one job costs in a page (its fields; the query's own point not counted). */
  readonly nodeCost: number
  readonly ratioToNodeCost: number
  /** p99 of serve's answer time to a webhook (measured at the sender, the emulator) in the burst. */
  readonly webhookAnswerP99Ms: number
  readonly webhookAnswerP99MsSteady: number
  readonly burst: {
    readonly deliveries: number
    /** The rate the sender reached: deliveries over the time from the burst's start to the last delivery started. */
    readonly perSecond: number
    readonly p50Ms: number
    readonly p99Ms: number
    readonly maxMs: number
    /** Deliveries answered 2xx whose event is not in webhook_events (serve said it was recorded and it was not). */
    readonly lost: number
    /** Sent again (first attempt: no answer in the sender's timeout, a refused connection, a 5xx): not in p50/p99, which time the attempt answered; a failure to a service that does not retry. */
    readonly retried: number
    /** Worker processes backfilling through the burst, and the rows their backfills landed while it was sent. */
    readonly loadWorkers: number
    readonly loadRowsDuringBurst: number
  }
  readonly polling: {
    readonly everyMinutes: number
    readonly p50Seconds: number
    readonly p99Seconds: number
    readonly pointsPerChangedRow: number
    readonly points: number
    /** Wall time of the incremental `sync` of every account over the same edits (added to the wait for the poll). */
    readonly runSeconds: number
  }
  /** Event-to-warehouse lag of the load accounts while their backfills run (freshnessDuringBackfill.ts). */
  readonly duringBackfillP99Seconds: number
  readonly duringBackfill: DuringBackfillResult
}


/**
 * Polling every `periodSec` from a schedule whose phase is unknown (uniform): for each edit, the wait until the next
 * poll over every phase of a one-second grid, plus the poll's own run time; every (edit, phase) pair is one sample.
 */
export const pollingLags = (editOffsetsSec: ReadonlyArray<number>, periodSec: number, runSec: number): ReadonlyArray<number> => {
  const lags: Array<number> = []
  for (const t of editOffsetsSec) {
    for (let phase = 0.5; phase < periodSec; phase++) {
      const next = phase + Math.ceil((t - phase) / periodSec) * periodSec
      lags.push(next - t + runSec)
    }
  }
  return lags
}

const POLL_MINUTES = 15

const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Polls `check` every 100 ms until it gives true, for at most `limitMs`. */
const waitUntil = <E, R>(step: string, check: Effect.Effect<boolean, E, R>, limitMs: number) =>
  Effect.gen(function* () {
    const started = performance.now()
    while (!(yield* check)) {
      if (performance.now() - started > limitMs) return yield* new BenchError({ step, reason: `not within ${limitMs / 1000} s` })
      yield* Effect.sleep(Duration.millis(100))
    }
  })

/** `account-sync <args>` as a child until the scope closes; the tail of its stderr. */
const startCommand = (args: ReadonlyArray<string>, env: Env) =>
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
const startServe = (env: Env, port: number): Effect.Effect<void, BenchError, Scope.Scope> =>
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

const pointsOf = (admin: EmulatorAdmin, ids: ReadonlyArray<string>) =>
  Effect.map(admin.stats(), (s) => ids.reduce((sum, id) => sum + (s.costPointsByAccount[id] ?? 0), 0))

/** Every delivery after the first `from` answered (2xx); none given up on. */
const deliveredSince = (admin: EmulatorAdmin, from: number) =>
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
const queueDrained = waitUntil(
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
const notRecorded = (deliveries: ReadonlyArray<WebhookDeliveryInfo>) =>
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

const answerTimes = (deliveries: ReadonlyArray<WebhookDeliveryInfo>) => deliveries.flatMap((d) => (d.answerMs === undefined ? [] : [d.answerMs]))

/** What one job costs in a page (its fields; the query's own point not counted). */
const nodeCostOf = () => estimateQueryCost(jobScalarsStream.document, { first: 1, offset: 0 }) - 1

export const freshnessBench = (emulator: EmulatorProcess, options: FreshnessOptions) =>
  Effect.gen(function* () {
    const admin = emulator.admin
    const ids = yield* Effect.forEach(Array.from({ length: options.accounts }), () => newAccount(emulator, options.jobsPerAccount, unlimited), { concurrency: 8 })
    // the load's buckets hold its backfills to ~200 rows/s each: unthrottled, they saturate the emulator (one process,
    // also the sender whose clock measures the answers; 2 cores), and the figure would time the emulator, not serve
    const loadLimits = { maxPoints: 20_000, restoreRate: 200 * nodeCostOf() }
    const loadIds = yield* Effect.forEach(Array.from({ length: options.burstLoadWorkers }), () => newAccount(emulator, options.burstLoadJobs, loadLimits), { concurrency: 2 })
    const schema = freshSchemaName("benchfresh")
    // every run of `sync` makes its incremental pass, events or not: the polling side is measured, not skipped
    const settings = { ...settingsFor(emulator), SYNC_INCREMENTAL_EVERY_WITH_EVENTS: "0 seconds" }

    return yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* connectAndBackfill(ids, 4)
      // the service's default bucket from here on
      yield* Effect.forEach(ids, (accountId) => admin.setLimits({ maxPoints: 10_000, restoreRate: 500, clientId: emulator.clientId, accountId }), { discard: true })
      const env = childEnv(settings, benchDatabaseUrl(), schema)
      const topics = ["JOB_CREATE", "JOB_UPDATE", "JOB_DESTROY"]
      // serve with its own consumer for phases 1 and 2; phase 3 runs serve beside workers
      const alone = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(alone, Exit.void))
      const port = yield* freePort
      yield* startServe(env, port).pipe(Scope.extend(alone))
      yield* admin.updateApp({ clientId: emulator.clientId, webhookUrl: `http://127.0.0.1:${port}/webhooks`, webhookTopics: topics })
      yield* admin.setWebhookOptions({})

      // 1. a steady stream of edits, one account after another
      const deliveriesBefore = (yield* admin.webhookDeliveries()).length
      const pointsBefore = yield* pointsOf(admin, ids)
      const lastEdit = new Map<string, { readonly accountId: string; readonly id: string; readonly atMs: number }>()
      const editOffsets: Array<number> = []
      const total = Math.max(1, Math.round(options.seconds * options.editsPerSecond))
      const started = performance.now()
      const startedAt = Date.now()
      for (let k = 0; k < total; k++) {
        const wait = started + (k * 1000) / options.editsPerSecond - performance.now()
        if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
        const accountId = ids[k % ids.length]!
        const atMs = Date.now()
        for (const id of (yield* admin.editRecords({ accountId, collection: "jobs", count: 1, seed: 50_000 + k })).ids) lastEdit.set(`${accountId}|${id}`, { accountId, id, atMs })
        editOffsets.push((atMs - startedAt) / 1000)
      }
      yield* deliveredSince(admin, deliveriesBefore)
      yield* queueDrained
      const points = (yield* pointsOf(admin, ids)) - pointsBefore
      const steadyDeliveries = (yield* admin.webhookDeliveries()).slice(deliveriesBefore)

      // each changed row as the service has it now, and when it landed
      const lags: Array<number> = []
      for (const accountId of ids) {
        const edited = [...lastEdit.values()].filter((e) => e.accountId === accountId)
        if (edited.length === 0) continue
        // the edited jobs only: a whole account's listing is the emulator's CPU, which serves the pages too
        const service = new Map((yield* admin.listRecords({ accountId, collection: "jobs", ids: edited.map((e) => e.id) })).map((j) => [j.id, Date.parse(String(j.updatedAt))]))
        const rows = yield* sql<{ id: string; updatedAt: Date; syncedAt: Date }>`
          SELECT id, updated_at AS "updatedAt", synced_at AS "syncedAt" FROM jobs WHERE account_id = ${accountId} AND id IN ${sql.in(edited.map((e) => e.id))}`
        const byId = new Map(rows.map((r) => [r.id, r]))
        for (const e of edited) {
          const row = byId.get(e.id)
          if (row === undefined || row.updatedAt.getTime() !== service.get(e.id)) {
            return yield* new BenchError({ step: "freshness", reason: `job ${e.id} of ${accountId} is not the service's after the events (${row ? row.updatedAt.toISOString() : "missing"})` })
          }
          lags.push((row.syncedAt.getTime() - e.atMs) / 1000)
        }
      }

      // 2. polling over the same edits: one incremental sync of every account, its points as the service charged them
      const pollPointsBefore = yield* pointsOf(admin, ids)
      const t0 = performance.now()
      const reports = yield* (yield* SyncRunner).run({ mode: "sync", accounts: ids, concurrency: 4 })
      const runSeconds = (performance.now() - t0) / 1000
      const notIncremental = reports.filter((r) => r.outcome !== "synced" || r.streams.some((s) => s.kind !== "incremental"))
      if (notIncremental.length > 0) {
        const r = notIncremental[0]!
        return yield* new BenchError({ step: "polling", reason: `${r.accountId}: ${r.outcome}, ${r.streams.map((s) => `${s.stream} ${s.kind} ${s.outcome}`).join(", ")}` })
      }
      const pollPoints = (yield* pointsOf(admin, ids)) - pollPointsBefore
      const polled = pollingLags(editOffsets, POLL_MINUTES * 60, runSeconds)

      // 3. a burst at `burstPerSecond` deliveries, serve's answer time as the sender sees it, while `burstLoadWorkers`
      // workers backfill on the same Postgres: serve as deployed beside them (WORKERS=true: it records each delivery and
      // enqueues the account's events job; the workers apply them)
      yield* Scope.close(alone, Exit.void)
      const queueSchema = `${schema}_queue`
      yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${queueSchema} CASCADE`).pipe(Effect.ignore))
      const withWorkers: Env = { ...env, WORKERS: "true", QUEUE_POLL_INTERVAL: "500 millis", QUEUE_SCHEDULE: "0 0 1 1 *" }
      const burstPort = yield* freePort
      yield* startServe(withWorkers, burstPort)
      yield* admin.updateApp({ clientId: emulator.clientId, webhookUrl: `http://127.0.0.1:${burstPort}/webhooks`, webhookTopics: topics })
      yield* Effect.forEach(loadIds, connectAccount, { concurrency: 2, discard: true })
      // each worker ticks the schedule at start: the load accounts, never synced, are due for their backfill
      const workers = yield* Effect.forEach(loadIds, () => startCommand(["worker", "--concurrency", "4"], withWorkers))
      const loadRows =
        loadIds.length === 0
          ? Effect.succeed(0)
          : Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id IN ${sql.in(loadIds)}`, (r) => r[0]?.n ?? 0)
      if (loadIds.length > 0) {
        yield* waitUntil(
          "load backfills",
          Effect.flatMap(loadRows, (n) => {
            const exited = workers.find((w) => w.child.exitCode !== null)
            return exited ? new BenchError({ step: "load workers", reason: `exited with ${exited.child.exitCode}: ${exited.tail()}` }) : Effect.succeed(n > 0)
          }),
          120_000
        )
      }
      const loadRowsBefore = yield* loadRows
      const burstFrom = (yield* admin.webhookDeliveries()).length
      // edits in groups of a few (about 40 admin calls a second), each group when its share of the rate is due
      const perCall = Math.max(1, Math.round(options.burstPerSecond / 40))
      const burstTotal = Math.max(1, Math.round(options.burstSeconds * options.burstPerSecond))
      // each group's call is made when it is due, not when the one before has returned: a slow admin call (the
      // emulator also serves the load's pages) must not slow the sending; the rate is the one reached, up to the last
      // call's return (when every delivery of the burst has been started)
      const calls: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      const burstStarted = performance.now()
      for (let sent = 0, k = 0; sent < burstTotal; k++) {
        const wait = burstStarted + (sent * 1000) / options.burstPerSecond - performance.now()
        if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
        const count = Math.min(perCall, burstTotal - sent)
        calls.push(yield* Effect.fork(admin.editRecords({ accountId: ids[k % ids.length]!, collection: "jobs", count, seed: 90_000 + k })))
        sent += count
      }
      yield* Fiber.join(Fiber.all(calls))
      const burstWallSec = Math.max((performance.now() - burstStarted) / 1000, burstTotal / options.burstPerSecond)
      yield* deliveredSince(admin, burstFrom)
      const loadRowsDuringBurst = (yield* loadRows) - loadRowsBefore
      yield* queueDrained
      const burst = (yield* admin.webhookDeliveries()).slice(burstFrom)
      const burstTimes = answerTimes(burst)
      const lost = yield* notRecorded(burst)
      const retried = burst.filter((d) => d.attempts > 1).length
      const whyRetried = new Map<string, number>()
      for (const d of burst) if (d.attempts > 1) whyRetried.set(d.lastError ?? "?", (whyRetried.get(d.lastError ?? "?") ?? 0) + 1)
      // said at once: the phase after it (edits mid-backfill) can fail on a loaded machine, and this figure stands alone
      yield* Effect.sync(() =>
        process.stderr.write(
          `bench: freshness burst: ${burst.length} deliveries at ${(burst.length / burstWallSec).toFixed(0)}/s reached, answer p50 ${quantile(burstTimes, 0.5).toFixed(1)} ms, ` +
            `p99 ${quantile(burstTimes, 0.99).toFixed(1)} ms, max ${Math.max(...burstTimes).toFixed(1)} ms, ${lost} lost, ${retried} sent again (${[...whyRetried].map(([why, n]) => `${n}: ${why}`).join("; ")})\n`
        )
      )
      // 4. edits to the load accounts while their backfills still run
      const duringBackfill = yield* duringBackfillLags(admin, loadIds)

      return {
        accounts: options.accounts,
        jobsPerAccount: options.jobsPerAccount,
        editsPerSecond: options.editsPerSecond,
        seconds: options.seconds,
        edits: total,
        changedRows: lastEdit.size,
        p50Seconds: quantile(lags, 0.5),
        p99Seconds: quantile(lags, 0.99),
        maxSeconds: Math.max(...lags),
        pointsPerChangedRow: points / lastEdit.size,
        points,
        nodeCost: nodeCostOf(),
        ratioToNodeCost: points / lastEdit.size / nodeCostOf(),
        webhookAnswerP99Ms: quantile(burstTimes, 0.99),
        webhookAnswerP99MsSteady: quantile(answerTimes(steadyDeliveries), 0.99),
        burst: {
          deliveries: burst.length,
          perSecond: burst.length / burstWallSec,
          p50Ms: quantile(burstTimes, 0.5),
          p99Ms: quantile(burstTimes, 0.99),
          maxMs: Math.max(...burstTimes),
          lost,
          retried,
          loadWorkers: workers.length,
          loadRowsDuringBurst
        },
        polling: {
          everyMinutes: POLL_MINUTES,
          p50Seconds: quantile(polled, 0.5),
          p99Seconds: quantile(polled, 0.99),
          pointsPerChangedRow: pollPoints / lastEdit.size,
          points: pollPoints,
          runSeconds
        },
        duringBackfillP99Seconds: duringBackfill.p99Seconds,
        duringBackfill
      } satisfies FreshnessResult
    }).pipe(
      Effect.scoped,
      Effect.provide(connectorLayer({ settings, schema, concurrency: 4 })),
      Effect.ensuring(admin.updateApp({ clientId: emulator.clientId, webhookUrl: null, webhookTopics: [] }).pipe(Effect.ignore)),
      Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "freshness", reason: String((e as { message?: string })?.message ?? e) })))
    )
  })

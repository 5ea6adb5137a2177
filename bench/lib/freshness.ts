import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Fiber, Scope } from "effect"
import { SyncRunner } from "../../src/run/SyncRunner.js"
import { connectAndBackfill, newAccount, unlimited } from "./benchAccounts.js"
import { childEnv, connectAccount, connectorLayer, type Env, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { duringBackfillLags } from "./freshnessDuringBackfill.js"
import type { EmulatorProcess } from "./emulatorProcess.js"
import { quantile } from "./quantile.js"
import { type FreshnessOptions, type FreshnessResult, pollingLags } from "./freshnessResult.js"
import { answerTimes, deliveredSince, freePort, nodeCostOf, notRecorded, pointsOf, queueDrained, startCommand, startServe, waitUntil } from "./freshnessServe.js"

/**
 * Freshness: how soon an edit at the service is in the warehouse, and at what cost, with the service's webhooks
 * driving `serve`'s consumer, against polling every 15 minutes. See bench/README.md for the method.
 */

const POLL_MINUTES = 15

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

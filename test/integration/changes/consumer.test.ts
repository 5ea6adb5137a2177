import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import * as Metrics from "../../../src/observability/metrics.js"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { eventsJson, eventsTable } from "../../../src/cli/status.js"
import { EventConsumer } from "../../../src/changes/EventConsumer.js"
import { EventQueue } from "../../../src/changes/EventQueue.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { eventStates, queueEvents } from "../../support/events.js"
import { brokenJobLookups } from "../../support/proxy.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"

const jobs = jobScalarsStream
/** What one job costs in a page: its fields (the connection's 1 point is per query). */
const nodeCost = estimateQueryCost(jobs.document, { first: 1, offset: 0 }) - 1

const { proxy, whileBroken } = brokenJobLookups()

const harness = syncHarness(
  { accounts: 1, jobs: 300, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } },
  { serviceUrl: proxy, env: { EVENTS_MAX_ATTEMPTS: "2", EVENTS_RETRY_BASE: "0 seconds" } }
)

layer(harness, { timeout: 60_000, excludeTestServices: true })("the change-event consumer", (it) => {
  it.effect("edits, creations and deletions reach the warehouse from events alone, at about the cost of the nodes", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      expect((yield* (yield* SyncRunner).run({ mode: "backfill" }))[0]!.outcome).toBe("synced")

      const before = new Set((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => j.id))
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 10, seed: 3 })).ids
      const destroyed = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 4, seed: 4 })).ids.filter((id) => !edited.includes(id))
      yield* admin.createRecords({ accountId, collection: "jobs", count: 3 })
      const after = yield* admin.listRecords({ accountId, collection: "jobs" })
      const created = after.filter((j) => !before.has(j.id))
      const updatedAt = new Map(after.map((j) => [j.id, String(j.updatedAt)]))
      const { nowMs } = yield* admin.clock()
      const now = new Date(nowMs).toISOString()
      // a job deleted without its destroy event reaching us yet: an update names it, the read by id finds it gone
      const silentlyGone = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 1, seed: 5 })).ids[0]!
      yield* queueEvents(accountId, [
        ...edited.filter((id) => updatedAt.has(id)).map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: updatedAt.get(id)! })),
        ...created.map((j) => ({ topic: "JOB_CREATE", itemId: j.id, occurredAt: String(j.updatedAt) })),
        ...destroyed.map((id) => ({ topic: "JOB_DESTROY", itemId: id, occurredAt: now })),
        // out of order: an update older than its destroy arrives after it
        ...destroyed.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: "2020-01-01T00:00:00Z" })),
        { topic: "JOB_UPDATE", itemId: silentlyGone, occurredAt: now },
        // a topic no stream has: acknowledged, nothing else
        { topic: "APP_CONNECT", itemId: accountId, occurredAt: now }
      ])

      const pointsMetric = Metrics.forAccount(Metrics.queryCostPoints, accountId)
      const pointsBefore = (yield* Metric.value(pointsMetric)).count
      const report = yield* (yield* EventConsumer).drain(accountId)
      expect(report).toMatchObject({ outcome: "drained", failed: 0, deferred: 0, deleted: destroyed.length + 1 })
      // the points metric counts each query once, as the service charged it
      expect((yield* Metric.value(pointsMetric)).count - pointsBefore).toBe(report.costPoints)
      expect(report.landed).toBe(edited.filter((id) => updatedAt.has(id)).length + created.length)
      yield* expectStreamExact(jobScalarsStream, accountId)
      // read by id in one page: the points are the nodes' plus the query's one
      expect(report.costPoints).toBeLessThanOrEqual(Math.ceil(1.1 * nodeCost * report.landed))
      const states = yield* eventStates(accountId)
      expect(states).toEqual({ applied: edited.filter((id) => updatedAt.has(id)).length + created.length + 2 * destroyed.length + 1, ignored: 1 })

      const [status] = (yield* (yield* EventQueue).status()).filter((s) => s.accountId === accountId)
      expect(status).toMatchObject({ waiting: 0, failed: 0 })
      expect(status!.lastApplied!.topic).toMatch(/^JOB_/)
      const view = { now: Date.now(), wide: false, maxWidth: 120 }
      // without connections to name it, an account is shown by its id
      expect(eventsTable([status!], [], view)).toMatch(new RegExp(`${accountId}\\s+0\\s+-\\s+JOB_\\S+ (just now|\\d+ s ago)`))
      expect(eventsJson(status)).toMatchObject({ waiting: 0, failed: 0, lastApplied: { topic: expect.stringMatching(/^JOB_/) } })
      // applied events are not applied again
      expect((yield* (yield* EventConsumer).drain(accountId)).applied).toBe(0)
    })
  )

  it.effect("an event that keeps failing is retried with backoff, then left failed with its error in status", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 2, seed: 9 })).ids
      yield* queueEvents(accountId, edited.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: new Date().toISOString() })))
      const report = yield* (yield* EventConsumer).drain(accountId).pipe(whileBroken)
      // EVENTS_MAX_ATTEMPTS=2 with no delay: tried twice, then given up on
      expect(report.failed).toBe(2 * edited.length)
      expect((yield* eventStates(accountId)).failed).toBe(edited.length)
      const [status] = (yield* (yield* EventQueue).status()).filter((s) => s.accountId === accountId)
      expect(status!.failed).toBe(edited.length)
      expect(status!.lastError).toContain("jobNumber")
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ attempts: number }>`SELECT max(attempts)::int AS attempts FROM webhook_events WHERE state = 'failed'`
      expect(row!.attempts).toBe(2)
    })
  )

  it.effect("while a stream's events flow, sync runs its incremental pass only every SYNC_INCREMENTAL_EVERY_WITH_EVENTS", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const runner = yield* SyncRunner
      // events of jobs arrived minutes ago (the tests above): the first incremental pass runs, the next waits
      const [first] = yield* runner.run({ mode: "sync" })
      expect(first!.streams.find((s) => s.stream === "jobs")).toMatchObject({ kind: "incremental", outcome: "succeeded" })
      const [second] = yield* runner.run({ mode: "sync" })
      const jobsReport = second!.streams.find((s) => s.stream === "jobs")!
      expect(jobsReport).toMatchObject({ kind: "none", outcome: "up-to-date" })
      expect(jobsReport.nextIncrementalAt!.getTime() - Date.now()).toBeGreaterThan(55 * 60_000)
      // no event for an hour: the stream is polled as usual
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE webhook_events SET received_at = received_at - interval '2 hours' WHERE account_id = ${accountId}`
      const [third] = yield* runner.run({ mode: "sync" })
      expect(third!.streams.find((s) => s.stream === "jobs")).toMatchObject({ kind: "incremental", outcome: "succeeded" })
    })
  )

  it.effect("events of an account disconnected at the service wait for the reconnect (no attempt counted, not `events flow`), then are applied", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const queue = yield* EventQueue
      const consumer = yield* EventConsumer
      // the service ends every token of the account (the APP_DISCONNECT it sends reaches nobody here): the consumer
      // finds out by its 401 and the refused refresh, and the connection is marked revoked
      yield* admin.marketplaceDisconnect({ clientId: app.clientId, accountId })
      // only this test's events (the ones above settled or failed)
      yield* sql`DELETE FROM webhook_events WHERE account_id = ${accountId}`
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 10, seed: 31 })).ids
      const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [j.id, String(j.updatedAt)]))
      yield* queueEvents(accountId, edited.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: updatedAt.get(id)! })))

      const first = yield* consumer.drain(accountId)
      expect(first).toMatchObject({ outcome: "needs-reconnect", failed: 0, deferred: edited.length })
      const waiting = () => sql<{ attempts: number; next_attempt_at: Date | null; state: string }>`
        SELECT attempts, next_attempt_at, state FROM webhook_events WHERE account_id = ${accountId}`
      expect((yield* waiting()).map((e) => [e.state, e.attempts, e.next_attempt_at])).toEqual(edited.map(() => ["pending", 0, null]))
      // not tried again while the account is not connected, however often the consumer looks (before: failed for good)
      for (let k = 0; k < 3; k++) expect((yield* consumer.drainAll()).filter((r) => r.accountId === accountId)).toEqual([])
      expect((yield* waiting()).every((e) => e.state === "pending" && e.attempts === 0)).toBe(true)
      const [status] = (yield* queue.status()).filter((s) => s.accountId === accountId)
      expect(status).toMatchObject({ waitingForReconnect: edited.length, failed: 0 })
      expect(eventsTable([status!], [], { now: Date.now(), wide: false, maxWidth: 120 })).toContain(`(${edited.length} until reconnected)`)
      // waiting events do not say the stream's changes flow: sync runs its incremental pass (once reconnected)
      expect(yield* queue.lastApplied(accountId, "JOB")).toBeNull()

      yield* connectAccount(accountId)
      const [after] = yield* consumer.drainAll()
      expect(after).toMatchObject({ accountId, outcome: "drained", applied: edited.length, failed: 0 })
      expect((yield* waiting()).map((e) => e.state)).toEqual(edited.map(() => "applied"))
      yield* expectStreamExact(jobs, accountId)
    })
  )
})

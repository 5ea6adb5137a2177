import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { EventInbox } from "../../../src/changes/EventInbox.js"
import * as Metrics from "../../../src/observability/metrics.js"
import { EventConsumer } from "../../../src/changes/EventConsumer.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { visitsStream } from "../../../src/sync/streams/visits.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { listen, waitFor, waitUntil } from "../../support/emulatorClient.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

// A visit's line items are its job's (Visit.lineItems is a JobLineItemConnection) and the service sends no visit event
// when a job's line items change: the visits of a changed job are read again with it (visits.dependsOn jobs).
const harness = syncHarness(
  { accounts: 1, jobs: 40, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } },
  { env: { SYNC_STREAMS: "jobs,visits", SYNC_EXCLUDE_FIELDS: "" } }
)

interface Delivery {
  readonly body: string
  readonly signature: string | undefined
  readonly topic: string
  readonly itemId: string
}

/** A receiver of the emulator's change webhooks for the app (JOB_* only: no visit event reaches us). */
const jobWebhooks = Effect.gen(function* () {
  const { admin, app } = yield* TestEmulator
  const got: Array<Delivery> = []
  const url = yield* listen((body, headers) => {
    const event = JSON.parse(body).data.webHookEvent as { topic: string; itemId: string }
    got.push({ body, signature: headers["x-service-hmac-sha256"] as string | undefined, topic: event.topic, itemId: event.itemId })
  })
  yield* admin.updateApp({ clientId: app.clientId, webhookUrl: url, webhookTopics: ["JOB_CREATE", "JOB_UPDATE", "JOB_DESTROY"] })
  /**
   * Waits for the `topic` delivery of `itemId`, records it through the webhook inbox (as serve does), and waits until
   * the queue has it due (a change is read again no sooner than a second after it).
   */
  const deliver = (topic: string, itemId: string) =>
    Effect.gen(function* () {
      yield* waitFor(() => got.some((d) => d.topic === topic && d.itemId === itemId))
      const inbox = yield* EventInbox
      for (const d of got.filter((d) => d.topic === topic && d.itemId === itemId)) yield* inbox.receive(Buffer.from(d.body), d.signature)
      const sql = yield* SqlClient.SqlClient
      yield* waitUntil(
        Effect.map(
          sql<{ due: boolean }>`SELECT bool_and(next_attempt_at <= now()) AS due FROM webhook_events WHERE topic = ${topic} AND item_id = ${itemId}`,
          (rows) => rows[0]?.due === true
        )
      )
    })
  return { deliver }
})

/** A live job with at least `minItems` line items and `minVisits` visits, not among `not`; its visits' ids. */
const jobWithVisits = (accountId: string, minItems: number, minVisits: number, not: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const visits = yield* admin.listRecords({ accountId, collection: "visits" })
    const jobs = yield* admin.listRecords({ accountId, collection: "jobs" })
    const visitsOf = (jobId: string) => visits.filter((v) => (v.job as { id: string } | null)?.id === jobId).map((v) => String(v.id))
    const job = jobs.find(
      (j) => !not.includes(j.id) && ((j.lineItems as ReadonlyArray<unknown>) ?? []).length >= minItems && visitsOf(j.id).length >= minVisits
    )
    expect(job, "a job with line items and visits").toBeDefined()
    return { jobId: job!.id, visitIds: visitsOf(job!.id) }
  })

/** Line item ids of a job at the service. */
const serviceItems = (accountId: string, jobId: string) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const job = (yield* admin.listRecords({ accountId, collection: "jobs" })).find((j) => j.id === jobId)!
    return (job.lineItems as ReadonlyArray<{ id: string }>).map((i) => i.id)
  })

/** The live line items of each visit in the warehouse. */
const storedVisitItems = (accountId: string, visitIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ visit_id: string; id: string }>`
      SELECT visit_id, id FROM visit_line_items WHERE account_id = ${accountId} AND visit_id IN ${sql.in(visitIds)} AND deleted_at IS NULL ORDER BY id`
    return new Map(visitIds.map((v) => [v, rows.filter((r) => r.visit_id === v).map((r) => r.id)]))
  })

/** A job's line items: one removed, one added, one edited (an update of the job). */
const changeLineItems = (accountId: string, jobId: string, seed: number) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const before = yield* serviceItems(accountId, jobId)
    yield* admin.editLineItems({ accountId, collection: "jobs", ids: [jobId], add: 1, remove: 1, edit: 1, seed })
    const after = yield* serviceItems(accountId, jobId)
    const removed = before.filter((id) => !after.includes(id))
    const added = after.filter((id) => !before.includes(id))
    expect(removed).toHaveLength(1)
    expect(added).toHaveLength(1)
    return { after: [...after].sort(), removed, added }
  })

layer(harness, { timeout: 60_000, excludeTestServices: true })("derived children under change (visits' line items are their job's)", (it) => {
  it.effect("the jobs stream's incremental pass reads the visits of the jobs it lands again: their line items follow the job's", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const runner = yield* SyncRunner
      expect((yield* runner.run({ mode: "backfill" }))[0]!.outcome).toBe("synced")
      yield* expectStreamExact(visitsStream, accountId)

      const { jobId, visitIds } = yield* jobWithVisits(accountId, 2, 1)
      const { after, removed } = yield* changeLineItems(accountId, jobId, 11)
      const [run] = yield* runner.run({ mode: "sync" })
      expect(run!.streams.find((s) => s.stream === "jobs")).toMatchObject({ kind: "incremental", outcome: "succeeded" })
      // the visits' own stream was not due: only the jobs' pass could have brought their line items
      expect(run!.streams.find((s) => s.stream === "visits")).toMatchObject({ kind: "none", outcome: "up-to-date" })
      expect([...(yield* storedVisitItems(accountId, visitIds)).values()]).toEqual(visitIds.map(() => after))
      expect(after).not.toContain(removed[0])
      yield* expectStreamExact(visitsStream, accountId)
      yield* expectStreamExact(jobsStream, accountId)
    })
  )

  it.scoped("a JOB_UPDATE for a job's line items reaches its visits' line items: the removed one marked deleted, the added one live; exact", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const { deliver } = yield* jobWebhooks
      const { jobId, visitIds } = yield* jobWithVisits(accountId, 2, 1)
      const { after, removed, added } = yield* changeLineItems(accountId, jobId, 21)
      yield* deliver("JOB_UPDATE", jobId)

      const pointsMetric = Metrics.forAccount(Metrics.queryCostPoints, accountId)
      const pointsBefore = (yield* Metric.value(pointsMetric)).count
      const report = yield* (yield* EventConsumer).drain(accountId)
      expect(report).toMatchObject({ outcome: "drained", applied: 1, failed: 0, deferred: 0, deleted: 0 })
      // the job and its visits read again; every point charged for them is in the report
      expect(report.landed).toBe(1 + visitIds.length)
      expect((yield* Metric.value(pointsMetric)).count - pointsBefore).toBe(report.costPoints)

      expect([...(yield* storedVisitItems(accountId, visitIds)).values()]).toEqual(visitIds.map(() => after))
      const [gone] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM visit_line_items
        WHERE account_id = ${accountId} AND visit_id IN ${sql.in(visitIds)} AND id = ${removed[0]!} AND deleted_at IS NOT NULL`
      expect(gone!.n).toBe(visitIds.length)
      expect(after).toContain(added[0])
      yield* expectStreamExact(visitsStream, accountId)
      yield* expectStreamExact(jobsStream, accountId)
    })
  )

  it.scoped("a JOB_DESTROY reads the job's visits again: one the service no longer has is marked deleted, the others stay exact", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const { deliver } = yield* jobWebhooks
      const { jobId, visitIds } = yield* jobWithVisits(accountId, 1, 2)
      // a visit of the job gone at the service with no event reaching us (only JOB_* topics are delivered here)
      const [goneVisit] = (yield* admin.deleteRecords({ accountId, collection: "visits", ids: [visitIds[0]!] })).ids
      yield* admin.deleteRecords({ accountId, collection: "jobs", ids: [jobId] })
      yield* deliver("JOB_DESTROY", jobId)

      const report = yield* (yield* EventConsumer).drain(accountId)
      expect(report).toMatchObject({ outcome: "drained", applied: 1, failed: 0, deferred: 0, deleted: 2, landed: visitIds.length - 1 })
      const rows = yield* sql<{ id: string; deleted: boolean }>`
        SELECT id, deleted_at IS NOT NULL AS deleted FROM visits WHERE account_id = ${accountId} AND id IN ${sql.in(visitIds)} ORDER BY id`
      expect(rows.filter((r) => r.deleted).map((r) => r.id)).toEqual([goneVisit])
      yield* expectStreamExact(visitsStream, accountId)
      yield* expectStreamExact(jobsStream, accountId)
    })
  )
})

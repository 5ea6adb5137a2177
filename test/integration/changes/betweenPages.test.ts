import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { EventQueue } from "../../../src/changes/EventQueue.js"
import { AccountLeases } from "../../../src/sync/AccountLeases.js"
import { eventsBetweenPages } from "../../../src/changes/betweenPages.js"
import { EventConsumer } from "../../../src/changes/EventConsumer.js"
import { makePageGate } from "../../../src/sync/paging/Pager.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { eventStates, queueEvents } from "../../support/events.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { brokenJobLookups } from "../../support/proxy.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

const { proxy, whileBroken } = brokenJobLookups()

// 2,000 jobs: more pages than one batch gathers (gatherPages), so a pass always has a batch before its last, where it looks.
// A failed event's retry is not due again within the pass, however slow the machine (the default first retry, ~5 s, was
// reached by a pass on a loaded machine: a second attempt)
const harness = syncHarness(
  { accounts: 1, jobs: 2000, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } },
  { serviceUrl: proxy, env: { EVENTS_RETRY_BASE: "1 hour" } }
)

/** Everything a drain could write for the account: its rows, its events, its checkpoints, its runs. */
const written = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      jobs: yield* sql`SELECT id, title, updated_at, synced_at, deleted_at FROM jobs WHERE account_id = ${accountId} ORDER BY id`,
      events: yield* sql`SELECT event_id, state, attempts, error, next_attempt_at, applied_at FROM webhook_events WHERE account_id = ${accountId} ORDER BY event_id`,
      checkpoints: yield* sql`SELECT * FROM sync_checkpoints WHERE account_id = ${accountId} ORDER BY stream`,
      runs: yield* sql`SELECT * FROM sync_runs WHERE account_id = ${accountId} ORDER BY id`
    }
  })

layer(harness, { timeout: 60_000, excludeTestServices: true })("change events applied between two pages", (it) => {
  it.effect("under a lease that moved to another holder nothing is written; under the lease held, every event is applied", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      expect((yield* (yield* SyncRunner).run({ mode: "backfill" }))[0]!.outcome).toBe("synced")
      const consumer = yield* EventConsumer
      const queue = yield* EventQueue
      const leases = yield* AccountLeases

      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 5, seed: 11 })).ids
      const destroyed = (yield* admin.deleteRecords({ accountId, collection: "jobs", count: 2, seed: 12 })).ids.filter((id) => !edited.includes(id))
      const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [j.id, String(j.updatedAt)]))
      const { nowMs } = yield* admin.clock()
      yield* queueEvents(accountId, [
        ...edited.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: updatedAt.get(id)! })),
        ...destroyed.map((id) => ({ topic: "JOB_DESTROY", itemId: id, occurredAt: new Date(nowMs).toISOString() })),
        { topic: "APP_CONNECT", itemId: accountId, occurredAt: new Date(nowMs).toISOString() }
      ])
      const before = yield* written(accountId)

      // no lease held by this fiber: nothing applied
      expect((yield* consumer.drainHeld(accountId)).outcome).toBe("locked")
      expect(yield* written(accountId)).toEqual(before)

      // a run's lease, moved to another holder (its epoch bumped) before the look between two pages
      yield* Effect.scoped(
        Effect.gen(function* () {
          expect(yield* leases.acquire(accountId)).toEqual(Option.none())
          yield* sql`UPDATE account_leases SET epoch = epoch + 1 WHERE account_id = ${accountId}`
          const between = yield* eventsBetweenPages(queue, consumer, accountId, yield* makePageGate)
          yield* between
          expect(yield* consumer.drainHeld(accountId)).toMatchObject({ outcome: "locked", applied: 0, failed: 0 })
        })
      )
      expect(yield* written(accountId)).toEqual(before)
      expect(yield* eventStates(accountId)).toEqual({ pending: edited.length + destroyed.length + 1 })
      // the other holder's run ends: its lease released
      yield* sql`UPDATE account_leases SET expires_at = '-infinity' WHERE account_id = ${accountId}`

      // the same look under the lease held: every event applied, the rows exact
      yield* Effect.scoped(
        Effect.gen(function* () {
          expect(yield* leases.acquire(accountId)).toEqual(Option.none())
          yield* yield* eventsBetweenPages(queue, consumer, accountId, yield* makePageGate)
        })
      )
      expect(yield* eventStates(accountId)).toEqual({ applied: edited.length + destroyed.length, ignored: 1 })
      yield* expectStreamExact(jobScalarsStream, accountId)
    })
  )

  it.effect("events whose application fails leave the pass that met them between two pages to succeed, and keep their retry and backoff", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 3, seed: 21 })).ids
      const updatedAt = new Map((yield* admin.listRecords({ accountId, collection: "jobs" })).map((j) => [j.id, String(j.updatedAt)]))
      yield* sql`DELETE FROM webhook_events WHERE account_id = ${accountId}`
      yield* queueEvents(accountId, edited.map((id) => ({ topic: "JOB_UPDATE", itemId: id, occurredAt: updatedAt.get(id)! })))
      const [report] = yield* (yield* SyncRunner).run({ mode: "backfill", restart: true }).pipe(whileBroken)
      expect(report!.outcome).toBe("synced")
      expect(report!.streams.map((s) => s.outcome)).toEqual(["succeeded"])
      const events = yield* sql<{ state: string; attempts: number; error: string | null; later: boolean }>`
        SELECT state, attempts, error, next_attempt_at > now() AS later FROM webhook_events WHERE account_id = ${accountId}`
      expect(events).toHaveLength(edited.length)
      for (const e of events) {
        expect(e).toMatchObject({ state: "pending", attempts: 1, later: true })
        expect(e.error).toMatch(/jobs/)
      }
      yield* expectStreamExact(jobScalarsStream, accountId)
    })
  )
})

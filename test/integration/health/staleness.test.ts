import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { staleLines } from "../../../src/cli/status.js"
import { prometheusText } from "../../../src/observability/prometheus.js"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { EventConsumer } from "../../../src/changes/EventConsumer.js"
import { Health } from "../../../src/health/Health.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { later } from "../../support/clock.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { queueEvents } from "../../support/events.js"
import { syncHarness } from "../../support/syncHarness.js"

/** The value of the sample `name{account_id="...",stream="..."}` in Prometheus text (undefined when absent). */
const sample = (text: string, name: string, accountId: string, stream: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(`account_id="${accountId}"`) && l.includes(`stream="${stream}"`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1))
}

const hour = 3_600_000

/** When the jobs stream of the account was last known current (null: never). */
const currentAt = (accountId: string) =>
  Effect.map(Effect.flatMap(Checkpoints, (c) => c.currentAsOf()), (all) => all.find((k) => k.accountId === accountId && k.stream === "jobs")?.at ?? null)

const freshnessOf = (accountId: string) =>
  Effect.map(Effect.flatMap(Health, (h) => h.snapshot), (s) => s.streams.find((f) => f.accountId === accountId && f.stream === "jobs")!)

layer(syncHarness({ accounts: 2, jobs: 40 }), { timeout: 60_000, excludeTestServices: true })("stale data: when each stream was last known current", (it) => {
  it.effect("a pass that changes nothing (a quiet account) makes the data current, though no row's synced_at moves; so does an applied event", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const [quiet, never] = [accounts[0]!.accountId, accounts[1]!.accountId]
      const sql = yield* SqlClient.SqlClient
      const runner = yield* SyncRunner
      yield* connectAccount(never)
      yield* connectAccount(quiet)
      expect(yield* currentAt(quiet)).toBeNull()

      expect((yield* runner.run({ mode: "backfill", accounts: [quiet] }))[0]!.outcome).toBe("synced")
      const [pass] = yield* sql<{ last_full_pass_at: Date }>`SELECT last_full_pass_at FROM sync_checkpoints WHERE account_id = ${quiet} AND stream = 'jobs'`
      const afterBackfill = (yield* currentAt(quiet))!
      expect(afterBackfill.getTime()).toBe(pass!.last_full_pass_at.getTime())
      const syncedAt = yield* sql<{ id: string; synced_at: Date }>`SELECT id, synced_at FROM jobs WHERE account_id = ${quiet} ORDER BY id`

      // nothing changed at the service: the incremental pass writes no row, yet the data is known current as of it
      const [report] = yield* runner.run({ mode: "sync", accounts: [quiet] })
      expect(report!.streams[0]).toMatchObject({ kind: "incremental", outcome: "succeeded" })
      expect(report!.streams[0]!.counts.rowsWritten).toBe(0)
      expect(yield* sql<{ id: string; synced_at: Date }>`SELECT id, synced_at FROM jobs WHERE account_id = ${quiet} ORDER BY id`).toEqual(syncedAt)
      const afterQuietPass = (yield* currentAt(quiet))!
      expect(afterQuietPass.getTime()).toBeGreaterThan(afterBackfill.getTime())
      const [incremental] = yield* sql<{ last_incremental_pass_at: Date }>`SELECT last_incremental_pass_at FROM sync_checkpoints WHERE account_id = ${quiet} AND stream = 'jobs'`
      expect(afterQuietPass.getTime()).toBe(incremental!.last_incremental_pass_at.getTime())

      // a change event applied: the stream is current as of the re-read, with no pass
      const [edited] = (yield* admin.editRecords({ accountId: quiet, collection: "jobs", count: 1, seed: 9 })).ids
      const [job] = (yield* admin.listRecords({ accountId: quiet, collection: "jobs" })).filter((j) => j.id === edited)
      yield* queueEvents(quiet, [{ topic: "JOB_UPDATE", itemId: edited!, occurredAt: String(job!.updatedAt) }])
      const beforeDrain = Date.now()
      expect(yield* (yield* EventConsumer).drain(quiet)).toMatchObject({ outcome: "drained", applied: 1, landed: 1 })
      const afterEvent = (yield* currentAt(quiet))!
      expect(afterEvent.getTime()).toBeGreaterThanOrEqual(beforeDrain)
      const [still] = yield* sql<{ last_incremental_pass_at: Date }>`SELECT last_incremental_pass_at FROM sync_checkpoints WHERE account_id = ${quiet} AND stream = 'jobs'`
      expect(still!.last_incremental_pass_at.getTime()).toBe(incremental!.last_incremental_pass_at.getTime())

      // dbt's view: per stream, the stalest active account (one that never finished a pass counts from its connection)
      const connected = new Map(
        (yield* sql<{ account_id: string; connected_at: Date }>`SELECT account_id, connected_at FROM connections`).map((r) => [r.account_id, r.connected_at])
      )
      const view = () => sql<{ stream: string; data_current_at: Date; accounts: number }>`SELECT stream, data_current_at, accounts FROM stream_freshness`
      expect(yield* view()).toEqual([{ stream: "jobs", data_current_at: connected.get(never), accounts: 2 }])
      expect((yield* runner.run({ mode: "backfill", accounts: [never] }))[0]!.outcome).toBe("synced")
      const neverNow = (yield* currentAt(never))!
      expect(yield* view()).toEqual([{ stream: "jobs", data_current_at: new Date(Math.min(neverNow.getTime(), afterEvent.getTime())), accounts: 2 }])
    })
  )

  it.effect("a stream is stale past its cadence plus the margin: in the snapshot, the status section and the gauges, computed when read", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      // jobs has change events: its cadence is the longer of SYNC_EVERY (15 min) and SYNC_INCREMENTAL_EVERY_WITH_EVENTS (1 h), plus 1 h
      const now = yield* freshnessOf(accountId)
      expect(now).toMatchObject({ stale: false, cadenceMs: hour, staleAfterMs: 2 * hour })
      expect(now.ageMs).toBeLessThan(60_000)
      expect(staleLines((yield* (yield* Health).snapshot).streams)).toBe("")
      const text = yield* prometheusText
      expect(sample(text, "account_sync_stream_data_age_seconds", accountId, "jobs")).toBeLessThan(60)
      expect(sample(text, "account_sync_stream_stale_after_seconds", accountId, "jobs")).toBe(7200)
      expect(text).toContain(`account_sync_connection_status{account_id="${accountId}",status="active"} 1`)
      expect(text).toContain(`account_sync_account_failed_runs_in_a_row{account_id="${accountId}"} 0`)

      // three hours on, nothing ran: stale everywhere it is read
      const then = yield* later(3 * hour)(freshnessOf(accountId))
      expect(then.stale).toBe(true)
      expect(then.ageMs).toBeGreaterThanOrEqual(3 * hour)
      const lines = yield* later(3 * hour)(Effect.map(Effect.flatMap(Health, (h) => h.snapshot), (s) => staleLines(s.streams)))
      expect(lines).toContain(`stale: ${accountId} jobs: last known current ${then.currentAt!.toISOString()}`)
      const laterText = yield* later(3 * hour)(prometheusText)
      expect(sample(laterText, "account_sync_stream_data_age_seconds", accountId, "jobs")).toBeGreaterThanOrEqual(3 * 3600)
    })
  )
})

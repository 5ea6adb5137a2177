import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "@effect/sql"
import { Connections } from "../../../src/auth/Connections.js"
import { connectionsTable, streamJson, streamsTable } from "../../../src/cli/status.js"
import { lastRunsByAccount, StreamStatus, StreamStatusLive } from "../../../src/health/StreamStatus.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { SyncSettings } from "../../../src/sync/SyncSettings.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

const harness = syncHarness({ accounts: 2, jobs: 250 }, { env: { SYNC_FULL_PASS_EVERY_JOBS: "6 hours" } })

layer(StreamStatusLive.pipe(Layer.provideMerge(harness)), { timeout: 60_000, excludeTestServices: true })("status of every stream of every account", (it) => {
  it.effect("shows each account's streams: never run, then the latest run, last and next full pass and the high-water mark", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const status = yield* StreamStatus
      const streams = (yield* SyncSettings).streams.catalog
      const before = yield* status.list(streams)
      expect(before.map((s) => [s.accountId, s.stream])).toEqual(accounts.flatMap((a) => streams.map((s) => [a.accountId, s.name])))
      expect(before.every((s) => s.lastRun === null && s.lastFullPassAt === null && s.inProgress === null)).toBe(true)
      const connections = yield* (yield* Connections).list()
      const view = { now: Date.now(), wide: false, maxWidth: 120 }
      expect(streamsTable(before, connections, view)).toContain("never")

      const [first] = accounts
      yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [first!.accountId] })
      const after = yield* status.list(streams)
      const jobs = after.find((s) => s.accountId === first!.accountId && s.stream === "jobs")!
      expect(jobs.lastRun).toMatchObject({ kind: "full", outcome: "succeeded", rows: 250, rowsWritten: 250, rowsDeleted: 0 })
      expect(jobs.lastRun!.costPoints).toBeGreaterThan(0)
      expect(jobs.lastFullPassAt).not.toBeNull()
      // SYNC_FULL_PASS_EVERY_JOBS: the stream's own cadence
      expect(jobs.nextFullPassAt!.getTime() - jobs.lastFullPassAt!.getTime()).toBe(Duration.toMillis(Duration.hours(6)))
      expect(jobs.highWaterMark).not.toBeNull()
      const other = after.find((s) => s.accountId === accounts[1]!.accountId && s.stream === "jobs")!
      expect(other.lastRun).toBeNull()
      expect(streamJson(jobs)).toMatchObject({ stream: "jobs", lastRun: { kind: "full", outcome: "succeeded", rows: 250 } })
      const table = streamsTable(after, connections, view)
      // each account named above its streams (by name: the names are unique), every line within the width
      expect(table.split("\n")).toContain(first!.name)
      expect(table.split("\n")).toContain(accounts[1]!.name)
      expect(table).not.toContain(first!.accountId)
      expect(table).toMatch(/\n {2}jobs\s+full\s+succeeded\s+(just now|\d+ s ago)\s+250\s+250\s+0\s+-\s+(just now|\d+ s ago)\s+in 6 h/)
      expect(Math.max(...table.split("\n").map((l) => l.length))).toBeLessThanOrEqual(120)
      expect(streamsTable(after, connections, { ...view, wide: true })).toContain(first!.accountId)
    })
  )

  it.effect("an account's last run is its latest run of any stream, from the same read model (connections know nothing of runs)", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const second = accounts[1]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO sync_runs (account_id, stream, kind, started_at, finished_at, outcome)
                 VALUES (${second}, 'jobs', 'full', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'succeeded'),
                        (${second}, 'clients', 'incremental', '2026-01-02T00:00:00Z', NULL, 'failed'),
                        (${second}, 'jobs', 'incremental', '2026-01-01T12:00:00Z', '2026-01-01T12:00:05Z', 'succeeded')`
      const runs = lastRunsByAccount(yield* (yield* StreamStatus).list((yield* SyncSettings).streams.catalog))
      expect(runs.get(second)).toEqual({ stream: "clients", kind: "incremental", outcome: "failed", startedAt: new Date("2026-01-02T00:00:00Z"), finishedAt: null })
      expect(runs.get(accounts[0]!.accountId)).toMatchObject({ kind: "full", outcome: "succeeded" })
      const view = { now: Date.parse("2026-01-02T00:03:00Z"), wide: false, maxWidth: 120 }
      expect(connectionsTable(yield* (yield* Connections).list(), runs, view)).toMatch(new RegExp(`${accounts[1]!.name}\\s.*3 min ago: clients failed`))
    })
  )
})

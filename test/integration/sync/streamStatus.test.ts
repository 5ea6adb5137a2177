import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { streamJson, streamsTable } from "../../../src/cli/status.js"
import { StreamStatus, StreamStatusLive } from "../../../src/sync/StreamStatus.js"
import { SyncRunner } from "../../../src/sync/SyncRunner.js"
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
      expect(streamsTable(before)).toContain("never")

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
      const table = streamsTable(after)
      expect(table).toContain(first!.accountId)
      expect(table).toContain(accounts[1]!.accountId)
    })
  )
})

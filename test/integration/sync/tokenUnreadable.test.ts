import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { lastRunsByAccount, StreamStatus, StreamStatusLive } from "../../../src/health/StreamStatus.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { storeUnderForeignKey } from "../../support/tokenKeys.js"

layer(syncHarness({ accounts: 2, jobs: 40 }), { timeout: 60_000, excludeTestServices: true })("a token that cannot be decrypted", (it) => {
  it.effect("fails its account alone, with a message naming it; the other account syncs; both runs are recorded", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const [good, bad] = [accounts[0]!.accountId, accounts[1]!.accountId]
      yield* connectAccount(good)
      yield* connectAccount(bad)
      const foreignId = yield* storeUnderForeignKey(bad)

      const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
      const byAccount = new Map(reports.map((r) => [r.accountId, r]))
      expect(byAccount.get(good)).toMatchObject({ outcome: "synced" })
      expect(byAccount.get(bad)?.outcome).toBe("failed")
      const message = byAccount.get(bad)!.message!
      expect(message).toContain(`account ${bad}: token cannot be decrypted with the configured key`)
      expect(message).toContain(`key id ${foreignId}`)
      expect(message).not.toContain("under-another-key")
      expect(yield* expectStreamExact(jobScalarsStream, good)).toBe(40)

      // every run is recorded and closed: the good one succeeded, the bad one failed with the same message
      const sql = yield* SqlClient.SqlClient
      const runs = yield* sql<{ account_id: string; outcome: string; error: string | null; finished_at: Date | null }>`
        SELECT account_id, outcome, error, finished_at FROM sync_runs ORDER BY account_id`
      expect(runs.filter((r) => r.account_id === good).map((r) => r.outcome)).toEqual(["succeeded"])
      const badRuns = runs.filter((r) => r.account_id === bad)
      expect(badRuns.map((r) => r.outcome)).toEqual(["failed"])
      expect(badRuns[0]!.error).toContain(`account ${bad}: token cannot be decrypted with the configured key`)
      expect(runs.every((r) => r.finished_at !== null)).toBe(true)
      // nothing the service said is wrong with the connection: it stays active (fix the key, or reconnect)
      expect(Option.getOrThrow(yield* (yield* Connections).get(bad)).status).toBe("active")
      const streams = yield* Effect.provide(Effect.flatMap(StreamStatus, (s) => s.list([jobScalarsStream])), StreamStatusLive)
      expect(lastRunsByAccount(streams).get(bad)?.outcome).toBe("failed")
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { ExitCodes } from "../../../src/cli/ExitCode.js"
import { runExit } from "../../../src/cli/summary.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

// Latency on every answer keeps each account's backfill going for a few seconds, so the revocation lands mid-run.
layer(syncHarness({ accounts: 3, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("revocation mid-run", (it) => {
  it.effect("revoking one of three accounts: the other two finish, the revoked one is listed, exit code 3", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const sql = yield* SqlClient.SqlClient
      for (const a of accounts) yield* connectAccount(a.accountId)
      const [first, victim, third] = accounts.map((a) => a.accountId) as [string, string, string]
      yield* admin.setFaults({ latencyRate: 1, latencyMs: 60, seed: 3 })

      const run = yield* Effect.fork((yield* SyncRunner).run({ mode: "backfill" }))
      // wait until the victim has committed some pages, then the admin disconnects the app in the marketplace
      let landed = 0
      for (let i = 0; i < 400 && landed < 300; i++) {
        yield* Effect.sleep("25 millis")
        landed = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${victim}`)[0]!.n
      }
      expect(landed).toBeGreaterThanOrEqual(300)
      expect(landed).toBeLessThan(3000)
      yield* admin.marketplaceDisconnect({ clientId: app.clientId, accountId: victim })
      const reports = yield* Fiber.join(run)
      yield* admin.setFaults({})

      const byAccount = new Map(reports.map((r) => [r.accountId, r]))
      expect(byAccount.get(first)!.outcome).toBe("synced")
      expect(byAccount.get(third)!.outcome).toBe("synced")
      expect(byAccount.get(victim)!.outcome).toBe("needs-reconnect")
      expect(yield* expectStreamExact(jobScalarsStream, first)).toBe(3000)
      expect(yield* expectStreamExact(jobScalarsStream, third)).toBe(3000)

      // what was committed before the revocation stays, with its checkpoint: page and cursor together
      const kept = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${victim}`)[0]!.n
      expect(kept).toBeGreaterThanOrEqual(landed)
      expect(kept).toBeLessThan(3000)
      // whole pages only: the first lands 100 rows, each later one 99 new (it joins on the last row landed)
      expect(kept === 0 || (kept - 100) % 99 === 0).toBe(true)
      const runs = yield* sql<{ outcome: string; error: string }>`SELECT outcome, error FROM sync_runs WHERE account_id = ${victim}`
      expect(runs.map((r) => r.outcome)).toEqual(["revoked"])
      expect(runs[0]!.error).toContain(victim)

      const connection = Option.getOrThrow(yield* (yield* Connections).get(victim))
      expect(connection.status).toBe("revoked")
      expect((yield* (yield* Connections).list()).filter((c) => c.status === "active").map((a) => a.accountId).sort()).toEqual([first, third].sort())

      const exit = runExit(reports)
      expect(exit.code).toBe(ExitCodes.needsReconnect)
      expect(exit.message).toContain("need reconnecting")
      expect(exit.message).toContain(victim)
      expect(exit.message).not.toContain(first)

      // the next cron run does not select the revoked account, yet keeps saying it needs reconnecting (exit 3)
      const later = yield* (yield* SyncRunner).run({ mode: "sync" })
      expect(later.map((r) => [r.accountId, r.outcome]).sort()).toEqual(
        [[first, "synced"], [victim, "needs-reconnect"], [third, "synced"]].sort()
      )
      const again = runExit(later)
      expect(again.code).toBe(ExitCodes.needsReconnect)
      expect(again.message).toContain(victim)
    })
  )
})

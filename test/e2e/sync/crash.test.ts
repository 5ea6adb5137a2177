import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { spawnCli } from "../../support/cli.js"
import { TestSettings, connectAccount } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"

/** The harness's one account, connected; the environment a connector child needs; its landed row count. */
const connectedAccount = Effect.gen(function* () {
  const { accounts } = yield* TestEmulator
  const accountId = accounts[0]!.accountId
  const sql = yield* SqlClient.SqlClient
  yield* connectAccount(accountId)
  const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings), LOG_LEVEL: "warn" }
  const count = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`, (r) => r[0]!.n)
  return { accountId, sql, env, count }
})

// 3,000 jobs at 10,000 points/s restore: the backfill takes several seconds, long enough to kill it mid-way.
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("crash and resume", (it) => {
  it.scoped("a backfill killed with SIGKILL and restarted resumes from its checkpoint and ends exact, no duplicates", () =>
    Effect.gen(function* () {
      const { accountId, sql, env, count } = yield* connectedAccount

      const first = yield* spawnCli(["backfill"], env)
      let landed = 0
      for (let i = 0; i < 600 && landed < 800 && first.child.exitCode === null; i++) {
        yield* Effect.sleep("50 millis")
        landed = yield* count
      }
      first.child.kill("SIGKILL")
      const killed = yield* first.exit
      expect(killed.signal, killed.stderr).toBe("SIGKILL")
      const atKill = yield* count
      expect(atKill).toBeGreaterThanOrEqual(800)
      expect(atKill).toBeLessThan(3000)
      // whatever was committed is whole pages, each with its checkpoint: the rows landed are the position reached
      const [checkpoint] = yield* sql<{ pass_kind: string; position: number; anchors: ReadonlyArray<string> }>`
        SELECT pass_kind, position, anchors FROM sync_checkpoints WHERE account_id = ${accountId}`
      expect(checkpoint!.pass_kind).toBe("full")
      expect(checkpoint!.position).toBe(yield* count)
      expect(checkpoint!.anchors.length).toBeGreaterThan(0)

      const done = yield* Effect.flatMap(spawnCli(["backfill"], env), (second) => second.exit)
      expect(done.code, done.stderr).toBe(0)
      expect(done.stdout).toContain("full (resumed)")

      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
      const runs = yield* sql<{ outcome: string; pages: number; rows: number }>`
        SELECT outcome, pages, rows FROM sync_runs WHERE account_id = ${accountId} ORDER BY id`
      expect(runs.map((r) => r.outcome)).toEqual(["interrupted", "succeeded"])
      // the second run did not start over: it fetched only the pages after the checkpoint
      expect(runs[1]!.pages).toBeLessThan(30)
      expect(runs[1]!.pages).toBeGreaterThan(0)
      expect(runs[1]!.rows).toBeLessThanOrEqual(3000 - atKill + 100)
    })
  )
})

layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("SIGTERM", (it) => {
  it.scoped("stops taking pages, records the run interrupted, exits 143; the next run resumes", () =>
    Effect.gen(function* () {
      const { accountId, sql, env, count } = yield* connectedAccount

      const run = yield* spawnCli(["sync"], env)
      for (let i = 0; i < 600 && (yield* count) < 500 && run.child.exitCode === null; i++) yield* Effect.sleep("50 millis")
      run.child.kill("SIGTERM")
      const stopped = yield* run.exit
      expect(stopped.code, stopped.stderr).toBe(143)
      const [recorded] = yield* sql<{ outcome: string; pages: number; rows: number }>`
        SELECT outcome, pages, rows FROM sync_runs WHERE account_id = ${accountId}`
      expect(recorded!.outcome).toBe("interrupted")
      const landed = yield* count
      expect(landed).toBeLessThan(3000)
      expect(recorded!.rows).toBe(landed)

      const again = yield* Effect.flatMap(spawnCli(["sync"], env), (child) => child.exit)
      expect(again.code, again.stderr).toBe(0)
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
    })
  )
})

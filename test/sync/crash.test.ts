import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ServiceSettings } from "../../src/auth/ServiceSettings.js"
import { connectAccount, settingsEnv } from "../support/connector.js"
import { TestDatabase } from "../support/database.js"
import { TestEmulator } from "../support/emulator.js"
import { expectWarehouseExact, syncHarness } from "./harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const start = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.sync(() => {
    const child = spawn(process.execPath, [path.join(root, "bin/account-sync.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, ...env, LOG_FORMAT: "json", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const output = { stdout: "", stderr: "" }
    child.stdout!.on("data", (d) => (output.stdout += d))
    child.stderr!.on("data", (d) => (output.stderr += d))
    return { child, output }
  })

const exited = (child: ChildProcess) =>
  Effect.async<{ code: number | null; signal: NodeJS.Signals | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    child.once("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
  })

// 3,000 jobs at 10,000 points/s restore: the backfill takes several seconds, long enough to kill it mid-way.
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 10_000, restoreRate: 10_000 } }), {
  timeout: 120_000,
  excludeTestServices: true
})("crash and resume", (it) => {
  it.effect("a backfill killed with SIGKILL and restarted resumes from its checkpoint and ends exact, no duplicates", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* connectAccount(accountId)
      const env = { ...(yield* TestDatabase).env, ...settingsEnv(yield* ServiceSettings) }
      const count = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`, (r) => r[0]!.n)

      const first = yield* start(["backfill"], env)
      let landed = 0
      for (let i = 0; i < 600 && landed < 800 && first.child.exitCode === null; i++) {
        yield* Effect.sleep("50 millis")
        landed = yield* count
      }
      first.child.kill("SIGKILL")
      const killed = yield* exited(first.child)
      expect(killed.signal, first.output.stderr).toBe("SIGKILL")
      const atKill = yield* count
      expect(atKill).toBeGreaterThanOrEqual(800)
      expect(atKill).toBeLessThan(3000)
      // whatever was committed is whole pages, each with its cursor
      const [checkpoint] = yield* sql<{ pass_kind: string; cursor: string | null }>`
        SELECT pass_kind, cursor FROM sync_checkpoints WHERE account_id = ${accountId}`
      expect(checkpoint!.pass_kind).toBe("full")
      expect(checkpoint!.cursor).not.toBeNull()

      const second = yield* start(["backfill"], env)
      const done = yield* exited(second.child)
      expect(done.code, second.output.stderr).toBe(0)
      expect(second.output.stdout).toContain("full (resumed)")

      expect(yield* expectWarehouseExact(accountId)).toBe(3000)
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
  it.effect("stops taking pages, records the run interrupted, exits 143; the next run resumes", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* connectAccount(accountId)
      const env = { ...(yield* TestDatabase).env, ...settingsEnv(yield* ServiceSettings) }
      const count = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`, (r) => r[0]!.n)

      const run = yield* start(["sync"], env)
      for (let i = 0; i < 600 && (yield* count) < 500 && run.child.exitCode === null; i++) yield* Effect.sleep("50 millis")
      run.child.kill("SIGTERM")
      const stopped = yield* exited(run.child)
      expect(stopped.code, run.output.stderr).toBe(143)
      const [recorded] = yield* sql<{ outcome: string; pages: number; rows: number }>`
        SELECT outcome, pages, rows FROM sync_runs WHERE account_id = ${accountId}`
      expect(recorded!.outcome).toBe("interrupted")
      const landed = yield* count
      expect(landed).toBeLessThan(3000)
      expect(recorded!.rows).toBe(landed)

      const again = yield* start(["sync"], env)
      expect((yield* exited(again.child)).code, again.output.stderr).toBe(0)
      expect(yield* expectWarehouseExact(accountId)).toBe(3000)
    })
  )
})

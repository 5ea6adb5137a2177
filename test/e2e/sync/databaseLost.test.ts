import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runCli, spawnCli } from "../../support/cli.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { postgresProxy } from "../../support/postgresProxy.js"
import { syncHarness } from "../../support/syncHarness.js"

const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }
const streams = ["users", "products", "clients", "properties", "requests", "quotes", "jobs", "visits", "invoices"]

// the backfill child reaches Postgres through a proxy this test owns and cuts mid-run (the shared server stays up)
describe.skipIf(!process.env.TEST_DATABASE_URL)("Postgres goes away mid-run", () => {
  layer(syncHarness({ accounts: 1, jobs: 1500, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: wholeAccount }), {
    timeout: 180_000,
    excludeTestServices: true
  })("a backfill whose database stops answering", (it) => {
    it.scoped("finished streams stay succeeded, the run stops at the stream it was on with one line naming DATABASE_URL's host, status shows it interrupted", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        const sql = yield* SqlClient.SqlClient
        yield* connectAccount(accountId)
        const { url } = yield* TestDatabase
        const env = { ...(yield* TestSettings), LOG_LEVEL: "warn" }
        const proxy = yield* postgresProxy(url)
        // trust authentication ignores the password: it is there to show it is never printed
        const withPassword = new URL(proxy.through(url))
        withPassword.password = "s3cret-pw"
        const child = yield* spawnCli(["backfill"], { ...env, DATABASE_URL: withPassword.toString() })

        // cut once the jobs stream (the 7th) has landed rows: the six before it finished
        const jobsLanded = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`, (r) => r[0]!.n)
        let landed = 0
        for (let i = 0; i < 1200 && landed < 200 && child.child.exitCode === null; i++) {
          yield* Effect.sleep("50 millis")
          landed = yield* jobsLanded
        }
        expect(landed).toBeGreaterThanOrEqual(200)
        yield* proxy.cut
        const ended = yield* child.exit
        expect(ended.code, ended.stderr).toBe(1)
        const output = `${ended.stdout}\n${ended.stderr}`
        expect(output).not.toContain("s3cret-pw")

        // the summary: the six finished streams succeeded; jobs failed; nothing after it was tried
        for (const stream of streams.slice(0, 6)) expect(ended.stdout).toMatch(new RegExp(`\\s${stream}\\s+full\\s+succeeded\\s`))
        expect(ended.stdout).toMatch(/\sjobs\s+full\s+failed\s/)
        expect(ended.stdout).not.toMatch(/\s(visits|invoices)\s+full/)
        // one line names the database by its address and says what failed
        const port = new URL(proxy.through(url)).port
        const named = ended.stderr.split("\n").filter((l) => l.includes(`Postgres at 127.0.0.1:${port}/`))
        expect(named, ended.stderr).toHaveLength(1)
        expect(named[0]).toMatch(/\(DATABASE_URL\) stopped answering during the run \(database error: .+\): the streams that finished are kept/)
        // one error line for the stream that failed, and no JSON blob in the warning
        expect(ended.stderr.split("\n").filter((l) => l.includes("\"logLevel\":\"ERROR\""))).toHaveLength(1)
        expect(ended.stderr).not.toContain("\"cause\":{")

        // the run's row stayed `running` (nothing could record its end); two minutes later, still no heartbeat:
        // status (on the direct address) shows it interrupted, the finished streams succeeded
        const [row] = yield* sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE account_id = ${accountId} AND stream = 'jobs'`
        expect(row!.outcome).toBe("running")
        yield* sql`UPDATE sync_runs SET started_at = started_at - interval '2 minutes', heartbeat_at = heartbeat_at - interval '2 minutes' WHERE account_id = ${accountId}`
        const status = yield* runCli(["status", "--json"], env)
        expect(status.code, status.stderr).toBe(0)
        const shown = (JSON.parse(status.stdout) as { connections: Array<{ streams: Array<{ stream: string; lastRun: { outcome: string; error: string | null } | null }> }> })
          .connections[0]!.streams
        expect(shown.filter((s) => streams.slice(0, 6).includes(s.stream)).map((s) => s.lastRun?.outcome)).toEqual(Array(6).fill("succeeded"))
        expect(shown.find((s) => s.stream === "jobs")!.lastRun).toMatchObject({ outcome: "interrupted", error: expect.stringContaining("its process stopped") })
        expect(shown.filter((s) => s.stream === "visits" || s.stream === "invoices").map((s) => s.lastRun)).toEqual([null, null])
      })
    )
  })
})

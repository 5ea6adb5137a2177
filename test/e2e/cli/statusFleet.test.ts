import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as path from "node:path"
import { runCli } from "../../support/cli.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"
import { render, runOnTerminal } from "../../support/live/terminalScreen.js"

const root = path.resolve(import.meta.dirname, "../../..")
const bin = path.join(root, "bin/account-sync.mjs")
const streams = ["users", "products", "clients", "properties", "requests", "quotes", "jobs", "visits", "invoices"]

/**
 * 1,000 accounts seeded in the fresh schema, by state: 950 healthy, 10 whose jobs run failed, 12 whose visits are
 * 10 days old, 8 in their first backfill (one running now, one whose process is gone), 15 revoked, 5 disconnected.
 */
const groups = [
  { name: "Healthy", from: 1, to: 950 },
  { name: "Failing", from: 951, to: 960 },
  { name: "Stale", from: 961, to: 972 },
  { name: "Backfilling", from: 973, to: 980 },
  { name: "Revoked", from: 981, to: 995 },
  { name: "Gone", from: 996, to: 1000 }
] as const
const group = (i: number) => groups.find((g) => i >= g.from && i <= g.to)!.name
const pad = (i: number) => String(i).padStart(4, "0")

const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const all = Array.from({ length: 1000 }, (_, k) => k + 1)
  yield* sql`INSERT INTO connections ${sql.insert(
    all.map((i) => ({
      account_id: `acc-${pad(i)}`,
      account_name: `${group(i)} ${pad(i)}`,
      status: group(i) === "Revoked" ? "revoked" : group(i) === "Gone" ? "disconnected" : "active",
      status_reason: group(i) === "Revoked" ? "refresh token refused (invalid_grant)" : null,
      // the accounts in their first backfill were connected minutes ago: not stale yet
      connected_at: group(i) === "Backfilling" ? new Date(Date.now() - 10 * 60_000) : new Date(Date.now() - 30 * 86_400_000)
    }))
  )}`
  const checkpoints = all.flatMap((i) =>
    streams.flatMap((stream, s) => {
      if (group(i) === "Backfilling" && s >= 2) return []
      const old = group(i) === "Stale" && stream === "visits"
      const at = new Date(Date.now() - (old ? 10 * 86_400_000 : 5 * 60_000))
      return [{ account_id: `acc-${pad(i)}`, stream, last_full_pass_at: at, data_current_at: at }]
    }),
    240_000
  )
  for (let k = 0; k < checkpoints.length; k += 2000) yield* sql`INSERT INTO sync_checkpoints ${sql.insert(checkpoints.slice(k, k + 2000))}`
  const started = new Date(Date.now() - 5 * 60_000)
  const finished = new Date(started.getTime() + 2000)
  const runs = all.flatMap((i) =>
    streams.flatMap((stream, s) => {
      if (group(i) === "Backfilling" && s > 2) return []
      const failed = group(i) === "Failing" && stream === "jobs"
      const going = group(i) === "Backfilling" && s === 2
      return [
        {
          account_id: `acc-${pad(i)}`,
          stream,
          kind: "full",
          started_at: started,
          finished_at: going ? null : finished,
          outcome: going ? "running" : failed ? "failed" : "succeeded",
          rows: 10,
          cost_points: 900,
          error: failed ? `boom ${pad(i)}` : null,
          // one backfill's process beats; the other's stopped 10 minutes ago
          heartbeat_at: going ? new Date(Date.now() - (i === 973 ? 0 : 10 * 60_000)) : null
        }
      ]
    }),
    240_000
  )
  for (let k = 0; k < runs.length; k += 2000) yield* sql`INSERT INTO sync_runs ${sql.insert(runs.slice(k, k + 2000))}`
  // a sync that found accounts 1-3 held elsewhere, after their runs: says nothing of their streams
  yield* sql`INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome, error)
             SELECT 'acc-000' || i, s, 'incremental', now(), 'skipped', 'another account-sync process is syncing this account'
             FROM generate_series(1, 3) i, unnest(${streams}::text[]) s`
})

const lines = (text: string) => text.trimEnd().split("\n")

layer(TestDatabaseLive, { timeout: 240_000 })("status of a fleet of 1,000 accounts", (it) => {
  it.effect("the default view fits a screen at 80 columns, opens with the summary line, those needing attention first", () =>
    Effect.gen(function* () {
      yield* seed
      const { env } = yield* TestDatabase
      const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} status`
      const bytes = yield* Effect.promise(() => runOnTerminal(command, 80, 50, { ...process.env, ...env, LOG_FORMAT: "json", FORCE_COLOR: "0" }))
      const screen = yield* Effect.promise(() => render(bytes, 80, 50))
      expect(screen.lines.length, screen.lines.join("\n")).toBeLessThanOrEqual(50)
      expect(screen.wrapped, screen.lines.join("\n")).toEqual([])
      // one line, continued between two counts where 80 columns are too narrow
      expect(screen.lines.slice(0, 2)).toEqual(["1,000 accounts: 950 active, 8 backfilling, 10 failing, 12 stale, 15 revoked,", "  5 disconnected; no job queue (no worker has run)"])
      const table = screen.lines.slice(screen.lines.findIndex((l) => l.startsWith("ACCOUNT")))
      // failing first, then revoked, stale, backfilling; then "… N more" (the healthy ones), within the screen
      const names = table.slice(1).map((l) => l.split(/\s{2,}/)[0]!)
      expect(names.slice(0, 10).every((n) => n.startsWith("Failing"))).toBe(true)
      expect(names.slice(10, 25).every((n) => n.startsWith("Revoked"))).toBe(true)
      expect(names.slice(25, 37).every((n) => n.startsWith("Stale"))).toBe(true)
      expect(table.find((l) => l.startsWith("Failing 0951"))).toMatch(/failing\s+\d+ min ago\s+failed: jobs \(boom 0951\)/)
      expect(screen.lines.some((l) => /^… [\d,]+ more: .*950 active \(--all lists them\)$/.test(l))).toBe(true)

      // one account in full at 80 columns: nothing wraps, and each stream's outcome and when it ran are whole
      const one = yield* Effect.promise(() => runOnTerminal(`${command} --account 'Failing 0951'`, 80, 50, { ...process.env, ...env, LOG_FORMAT: "json", FORCE_COLOR: "0" }))
      const detail = yield* Effect.promise(() => render(one, 80, 50))
      expect(detail.wrapped, detail.lines.join("\n")).toEqual([])
      expect(detail.lines.filter((l) => /^ {2}\w+\s+full\s+(succeeded|failed)\s+\d+ min ago\s+10\s/.test(l)), detail.lines.join("\n")).toHaveLength(9)
      expect(detail.lines.some((l) => /^ {2}jobs\s+full\s+failed\s+\d+ min ago/.test(l))).toBe(true)
    }),
    240_000
  )

  it.effect("--failing, --stale, --account and --stream each find what they say; --all lists every account", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const status = (...args: Array<string>) => runCli(["status", ...args], env)
      const accountsOf = (stdout: string) =>
        lines(stdout)
          .filter((l) => /^(Healthy|Failing|Stale|Backfilling|Revoked|Gone) \d{4}/.test(l))
          .map((l) => l.slice(0, l.indexOf(" ", l.indexOf(" ") + 1)))

      const failing = yield* status("--failing")
      expect(failing.code, failing.stderr).toBe(0)
      // the summary counts the whole fleet (within 120 columns when piped); the next line what matches
      expect(lines(failing.stdout).slice(0, 3)).toEqual([
        "1,000 accounts: 950 active, 8 backfilling, 10 failing, 12 stale, 15 revoked, 5 disconnected;",
        "  no job queue (no worker has run)",
        "10 accounts match --failing"
      ])
      expect(accountsOf(failing.stdout)).toEqual(Array.from({ length: 10 }, (_, k) => `Failing ${pad(951 + k)}`))

      const stale = yield* status("--stale")
      expect(accountsOf(stale.stdout)).toEqual(Array.from({ length: 12 }, (_, k) => `Stale ${pad(961 + k)}`))
      // judged by the streams asked for: no stale jobs anywhere, no failing visits
      expect(lines((yield* status("--stale", "--stream", "jobs")).stdout)[2]).toBe("0 accounts match --stale --stream jobs")
      expect(lines((yield* status("--failing", "--stream", "visits")).stdout)[2]).toBe("0 accounts match --failing --stream visits")

      // one account: shown in full, every stream; the skipped sync after its runs is not its streams' latest run
      const one = yield* status("--account", "healthy 0002")
      expect(one.stdout).toContain("1 account match --account healthy 0002")
      expect(lines(one.stdout).filter((l) => /^ {2}\w+\s+full\s+succeeded/.test(l))).toHaveLength(9)
      expect(one.stdout).not.toContain("skipped")
      expect(one.stdout).not.toContain("errors of the latest runs")

      // a backfill whose process is gone is interrupted, the one that beats is running
      const backfills = yield* status("--account", "acc-0973", "--account", "acc-0974", "--stream", "clients")
      expect(backfills.stdout).toMatch(/ {2}clients\s+full\s+running/)
      expect(backfills.stdout).toMatch(/ {2}clients\s+full\s+interrupted/)

      const every = yield* status("--all")
      expect(accountsOf(every.stdout)).toHaveLength(1000)

      const json = JSON.parse((yield* status("--stale", "--json")).stdout)
      expect(json.summary).toEqual({ accounts: 1000, byState: { failing: 10, revoked: 15, stale: 12, backfilling: 8, disconnected: 5, active: 950 }, jobsWaiting: null, deadLetters: null })
      expect(json.connections.map((c: { accountName: string }) => c.accountName)).toEqual(Array.from({ length: 12 }, (_, k) => `Stale ${pad(961 + k)}`))
      expect(json.connections[0]).toMatchObject({ state: "stale", staleStreams: ["visits"], failingStreams: [] })

      const bad = yield* status("--stream", "vists")
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("--stream vists: no such stream; did you mean visits?")
    }),
    240_000
  )

  it.effect("--runs: the run history, newest first, within a screen; --failing keeps failed runs; --json", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const runs = yield* runCli(["status", "--runs"], env)
      expect(runs.code, runs.stderr).toBe(0)
      const table = lines(runs.stdout)
      expect(table.length).toBeLessThanOrEqual(50)
      expect(table[0]).toMatch(/^STARTED\s+ACCOUNT\s+STREAM\s+PASS\s+OUTCOME\s+ROWS\s+POINTS\s+TIME\s+ERROR$/)
      // the skipped runs are the newest: history shows them as they were
      expect(table[1]).toMatch(/skipped/)

      const failed = yield* runCli(["status", "--runs", "--failing"], env)
      const failedRows = lines(failed.stdout).slice(1)
      expect(failedRows).toHaveLength(10)
      expect(failedRows.every((l) => /^\S.*Failing \d{4}\s+jobs\s+full\s+failed/.test(l))).toBe(true)

      const json = JSON.parse((yield* runCli(["status", "--runs", "--account", "Backfilling 0974", "--json"], env)).stdout)
      expect(json.map((r: { stream: string; outcome: string }) => `${r.stream} ${r.outcome}`).sort()).toEqual(["clients interrupted", "products succeeded", "users succeeded"])
    }),
    240_000
  )
})

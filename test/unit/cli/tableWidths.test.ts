import { describe, expect, it } from "@effect/vitest"
import type { Connection } from "../../../src/auth/Connections.js"
import { displayWidth } from "../../../src/cli/output/text.js"
import { connectionsTable, streamsTable } from "../../../src/cli/status.js"
import { renderSummary } from "../../../src/cli/summary.js"
import { zeroCounts } from "../../../src/run/Runs.js"
import type { AccountReport } from "../../../src/run/SyncRunner.js"

const streams = ["users", "products", "clients", "properties", "requests", "quotes", "jobs", "visits", "invoices"]

const account = (accountId: string, accountName: string, kind: "full" | "incremental", waitMs: number): AccountReport => ({
  accountId,
  accountName,
  outcome: "synced",
  streams: streams.map((stream, i) => ({
    stream,
    kind,
    outcome: "succeeded",
    resumed: false,
    counts: { ...zeroCounts, rows: 100 * (i + 1), rowsWritten: 100 * (i + 1), costPoints: 9_000 * (i + 1), throttleWaitMs: waitMs },
    durationMs: waitMs + 1_200
  }))
})

const widest = (text: string) => Math.max(...text.split("\n").map(displayWidth))

describe("tables at 80 columns keep the names, outcomes and times whole", () => {
  it("the run summary: each account's name on a line above its streams where a column of names would be cut; TIME and OUTCOME whole", () => {
    const reports = [account("a1", "Northwind Landscaping", "incremental", 6_000), account("a2", "Bluebird Plumbing & Heating", "incremental", 6_000)]
    const narrow = renderSummary(reports, { mode: "sync", durationMs: 40_000, maxWidth: 80 })
    expect(widest(narrow), narrow).toBeLessThanOrEqual(80)
    expect(narrow).not.toContain("…")
    const lines = narrow.split("\n")
    expect(lines[0]).toMatch(/^STREAM\s+PASS\s+OUTCOME\s+ROWS\s+WRITTEN\s+DELETED\s+POINTS\s+TIME$/)
    expect(lines[1]).toBe("Northwind Landscaping")
    expect(lines[2]).toMatch(/^ {2}users\s+incremental\s+synced\s+100\s+100\s+0\s+9,000\s+7\.2 s$/)
    expect(lines[11]).toBe("Bluebird Plumbing & Heating")
    expect(lines.at(-2)).toMatch(/^TOTAL\s+2 accounts\s+9,000\s+9,000\s+0\s+810,000\s+40 s$/)
    // WAITED left out at 80 columns: nothing said of it
    expect(lines.at(-1)).toBe("sync took 40 s: 2 synced")

    // where the names fit (120 columns), one table with an ACCOUNT column, as before
    const wide = renderSummary(reports, { mode: "backfill", durationMs: 40_000, maxWidth: 120 })
    expect(wide.split("\n")[0]).toMatch(/^ACCOUNT\s+STREAM\s+PASS\s+OUTCOME\s+ROWS\s+WRITTEN\s+DELETED\s+POINTS\s+WAITED\s+TIME$/)
    expect(wide.split("\n")[1]).toMatch(/^Northwind Landscaping\s+users\s+incremental\s+synced\s+100\s+100\s+0\s+9,000\s+6\.0 s\s+7\.2 s$/)
    // the waits of two accounts side by side add up past the run's time: the last line says so
    expect(wide.split("\n").at(-1)).toBe("backfill took 40 s: 2 synced (WAITED adds up 2 accounts' waits for their budgets, side by side: 1 min 48 s in 40 s)")
    // one account: its waits are within its time, no note
    expect(renderSummary([reports[0]!], { mode: "sync", durationMs: 70_000, maxWidth: 80 }).split("\n").at(-1)).toBe("sync took 1 min 10 s: 1 synced")
  })

  it("status's connections: a reason that does not fit whole goes below the table, wrapped, never cut", () => {
    const connection = (accountId: string, accountName: string, status: Connection["status"], statusReason: string | null): Connection => ({
      accountId,
      accountName,
      status,
      statusReason,
      scopes: [],
      connectedAt: new Date(0),
      updatedAt: new Date(0),
      tokenExpiresAt: status === "active" ? new Date(3_600_000) : null
    })
    const reason = "APP_DISCONNECT webhook (2026-11-28T23:31:19.000Z): the account's admin disconnected the app in the marketplace"
    const connections = [connection("a1", "Northwind Landscaping", "active", null), connection("a2", "Bluebird Plumbing & Heating", "disconnected", reason)]
    const lastRuns = new Map([
      ["a1", { stream: "invoices", kind: "incremental", outcome: "succeeded", startedAt: new Date(0), finishedAt: null }],
      ["a2", { stream: "invoices", kind: "incremental", outcome: "succeeded", startedAt: new Date(-32_000), finishedAt: null }]
    ])
    const table = connectionsTable(connections, lastRuns, { now: 0, wide: false, maxWidth: 80 })
    expect(widest(table), table).toBeLessThanOrEqual(80)
    expect(table).not.toContain("…")
    const lines = table.split("\n")
    // the token's expiry leaves first, the names and the last run's time stay whole
    expect(lines[0]).toMatch(/^ACCOUNT\s+STATUS\s+LAST RUN$/)
    expect(lines[2]).toMatch(/^Bluebird Plumbing & Heating\s+disconnected\s+32 s ago: invoices succeeded$/)
    expect(table.slice(table.indexOf("why:\n") + 5).replace(/\s+/g, " ").trim()).toBe(`Bluebird Plumbing & Heating: disconnected: ${reason}`)
    // a reason that fits whole stays a column (here at 120 columns)
    const short = connectionsTable([connection("a1", "Acme", "revoked", "refresh token refused")], new Map(), { now: 0, wide: false, maxWidth: 120 })
    expect(short.split("\n")[1]).toMatch(/^Acme\s+revoked\s+refresh token refused; reconnect with `account-sync connect`\s+-\s+never$/)
  })

  it("status's streams: an account that is not active has no next full pass (it had 'in 24 h'); an error line is wrapped whole", () => {
    const error = "another account-sync process is syncing this account (held by worker vm-7f3a9 (pid 4242)), and this is a long error to wrap"
    const state = (accountId: string) => ({
      accountId,
      stream: "jobs",
      inProgress: null,
      lastFullPassAt: new Date(-60_000),
      nextFullPassAt: new Date(86_400_000 - 60_000),
      fullPassRequested: false,
      highWaterMark: null,
      lastRun: { kind: "full", outcome: "failed", startedAt: new Date(-60_000), finishedAt: new Date(-50_000), rows: 10, rowsWritten: 10, rowsDeleted: 0, costPoints: 900, overheadPoints: 0, error },
      deletionsUnchecked: null,
      rowsWithheld: null
    })
    const connection = (accountId: string, accountName: string, status: Connection["status"]): Connection => ({
      accountId,
      accountName,
      status,
      statusReason: null,
      scopes: [],
      connectedAt: new Date(0),
      updatedAt: new Date(0),
      tokenExpiresAt: null
    })
    const table = streamsTable([state("a1"), state("a2")], [connection("a1", "Northwind Landscaping", "active"), connection("a2", "Bluebird Plumbing & Heating", "disconnected")], {
      now: 0,
      wide: false,
      maxWidth: 80
    })
    expect(widest(table), table).toBeLessThanOrEqual(80)
    const lines = table.split("\n")
    expect(lines[2]).toMatch(/^ {2}jobs\s+full\s+failed\s+1 min ago\s.*\s+in 24 h$/)
    expect(lines[4]).toMatch(/^ {2}jobs\s+full\s+failed\s+1 min ago\s.*\s+-$/)
    expect(table.slice(table.indexOf("errors of the latest runs:")).replace(/\s+/g, " ")).toContain(`Bluebird Plumbing & Heating: jobs: ${error}`)
  })
})

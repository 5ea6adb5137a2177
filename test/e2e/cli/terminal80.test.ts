import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { render, runOnTerminal } from "../../support/live/terminalScreen.js"
import { syncHarness } from "../../support/syncHarness.js"

const root = path.resolve(import.meta.dirname, "../../..")
const bin = path.join(root, "bin/account-sync.mjs")
const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }
const streams = ["users", "products", "clients", "properties", "requests", "quotes", "jobs", "visits", "invoices"]
const cols = 80
const rows = 30
const duration = /(\d+(\.\d)? s|\d+ min( \d+ s)?|\d+ h( \d+ min)?)/.source

/** The lines of one table: from its header to the line before `end`. */
const tableLines = (lines: ReadonlyArray<string>, header: RegExp, end: RegExp) => {
  const from = lines.findIndex((l) => header.test(l))
  expect(from, lines.join("\n")).toBeGreaterThanOrEqual(0)
  const to = lines.findIndex((l, i) => i > from && end.test(l))
  return lines.slice(from, to < 0 ? undefined : to)
}

// the real program on a pseudo-terminal of 80 x 30, against the emulator and Postgres, drawn by a terminal emulator
describe.skipIf(!process.env.TEST_DATABASE_URL)("the program on an 80-column terminal", () => {
  layer(syncHarness({ accounts: 2, jobs: 120, limits: { maxPoints: 10_000, restoreRate: 3_000 } }, { env: wholeAccount }), {
    timeout: 300_000,
    excludeTestServices: true
  })("backfill and status at 80 x 30", (it) => {
    it.scoped("the live display shows the account's time left; the summary and status tables fit 80 columns with times, outcomes and reasons whole", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        for (const a of accounts) yield* connectAccount(a.accountId)
        // the logs as a person sees them on a terminal: no LOG_FORMAT, and none of the CI variables (the program and
        // ink turn the live display off in CI, and this suite runs in CI)
        const inherited = Object.fromEntries(
          Object.entries(process.env).filter(([key]) => key !== "LOG_FORMAT" && key !== "CI" && key !== "CONTINUOUS_INTEGRATION" && !key.startsWith("CI_"))
        )
        const env: NodeJS.ProcessEnv = { ...inherited, ...(yield* TestSettings), FORCE_COLOR: "0", LOG_LEVEL: "info" }
        const run = (args: string) => Effect.promise(() => runOnTerminal(`${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} ${args}`, cols, rows, env))

        const backfill = yield* run("backfill")
        const text = backfill.toString("utf8")
        // the live display: an account's line with its stream's time left and the account's, while a stream before
        // its last runs (the frames are drawn over each other; each one is in the bytes)
        const live = text.match(new RegExp(`(${accounts.map((a) => a.name.slice(0, 10)).join("|")})[^\\n\\r]*\\s(\\w+) [1-8]/9\\s[^\\n\\r]*account ${duration} left`))
        expect(live, text.slice(-3000)).not.toBeNull()
        const screen = yield* Effect.promise(() => render(backfill, cols, rows))
        // nothing the program printed was continued on a second line by the terminal
        expect(screen.wrapped, screen.lines.join("\n")).toEqual([])
        const summary = tableLines(screen.lines, /^STREAM\s+PASS\s+OUTCOME\s/, /^backfill took /)
        for (const line of summary) expect(line.length, line).toBeLessThanOrEqual(cols)
        expect(summary.join("\n")).not.toContain("…")
        // each account's name whole on a line of its own, then its nine streams, each with its outcome and time whole
        for (const a of accounts) expect(summary).toContain(a.name)
        const streamLines = summary.filter((l) => /^ {2}\w+\s+full\s+synced\s/.test(l))
        expect(streamLines.map((l) => l.trim().split(/\s+/)[0]), summary.join("\n")).toEqual([...streams, ...streams])
        for (const l of streamLines) expect(l).toMatch(new RegExp(`\\s${duration}$`))
        expect(summary.at(-1)).toMatch(new RegExp(`^TOTAL\\s+2 accounts\\s.*\\s${duration}$`))

        // one account disconnected by the service's webhook (its reason as the webhook records it): status at 80 columns
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE connections SET status = 'disconnected', status_reason = 'APP_DISCONNECT webhook (2026-11-28T13:49:02.000Z)' WHERE account_id = ${accounts[1]!.accountId}`
        const statusScreen = yield* Effect.promise(async () => render(await runOnTerminal(`${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} status`, cols, rows, env), cols, rows))
        const lines = statusScreen.lines
        expect(statusScreen.wrapped, lines.join("\n")).toEqual([])
        for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(cols)
        const connections = tableLines(lines, /^ACCOUNT\s+STATUS\s/, /^$/)
        // the last run's time whole beside each account, and the reason whole on a line of its own
        expect(connections.find((l) => l.startsWith(accounts[0]!.name))).toMatch(/\s(just now|\d+ s ago): invoices succeeded$/)
        expect(connections.find((l) => l.startsWith(accounts[1]!.name))).toMatch(/\sdisconnected\s+(\S.*\s)?(just now|\d+ s ago): invoices succeeded$/)
        const why = tableLines(lines, /^why:$/, /^(STREAM|$)/).slice(1)
        expect(why[0]).toMatch(new RegExp(`^ {2}${accounts[1]!.name}: disconnected: `))
        expect(why.join(" ").replace(/\s+/g, " ").trim()).toBe(`${accounts[1]!.name}: disconnected: APP_DISCONNECT webhook (2026-11-28T13:49:02.000Z)`)
        // every stream's pass, outcome and start whole; the disconnected account has no next full pass
        const streamRows = lines.filter((l) => /^ {2}\w+\s+full\s+succeeded\s+(just now|\d+ s ago)\s/.test(l))
        expect(streamRows, lines.join("\n")).toHaveLength(18)
        const disconnectedAt = lines.indexOf(accounts[1]!.name)
        expect(disconnectedAt, lines.join("\n")).toBeGreaterThan(0)
        for (const l of lines.slice(disconnectedAt + 1, disconnectedAt + 10)) expect(l).toMatch(/\s-$/)
        for (const l of lines.slice(lines.indexOf(accounts[0]!.name) + 1, lines.indexOf(accounts[0]!.name) + 10)) expect(l).toMatch(/\sin 24 h$/)
      }),
      300_000
    )
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "../../support/cli.js"
import { lookAgain } from "../../../src/demo/Demo.js"

/**
 * The newcomer's path: the demo piped (as CI runs it), then the commands its last lines suggest, in its data
 * directory, with nothing else configured.
 */
describe("npm run demo, then what it suggests (the program, embedded database)", () => {
  it.effect(
    "piped: no redraws, one log line per stream run and one per run; then status, status --json and query work on its data, creating nothing",
    () =>
      Effect.gen(function* () {
        const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-demo-")), "demo")
        const demo = yield* runCli(["demo", "--jobs", "30", "--data-dir", dataDir], { LOG_LEVEL: "info" })
        expect(demo.code, demo.stderr).toBe(0)
        // piped: no cursor movement or erasing, only lines
        expect(demo.stdout + demo.stderr).not.toMatch(/\x1b\[/)
        const logs = demo.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { message: string; annotations: Record<string, unknown> })
        expect(logs.filter((l) => l.message.endsWith("page landed"))).toEqual([])
        const streamEnds = logs.filter((l) => l.annotations.stream !== undefined && /^\w+ (succeeded|failed|interrupted|revoked)$/.test(l.message))
        const runEnds = logs.filter((l) => /^(sync|backfill) finished$/.test(l.message))
        // four runs: a backfill of two accounts, a sync, a full pass of one, a sync of the one still connected;
        // a stream that was up to date runs no pass and says nothing
        expect(streamEnds.length).toBeGreaterThanOrEqual(9 * 2 + 9)
        expect(streamEnds.every((l) => typeof l.annotations.rows === "number" && typeof l.annotations.durationMs === "number")).toBe(true)
        expect(runEnds).toHaveLength(0) // the demo prints its summaries as tables; `sync`/`backfill` log a finished line
        expect(demo.stdout).toContain("exact: ")
        expect(demo.stdout).toContain("  npx account-sync status")
        for (const line of demo.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(120)

        const keyFile = path.join(dataDir, "token-encryption.key")
        const keyBefore = fs.readFileSync(keyFile, "utf8")
        const files = () => fs.readdirSync(dataDir).sort()
        const before = files()
        // exactly what the demo's last lines say to type: DATA_DIR and DB_SCHEMA, nothing else
        const env = { DATA_DIR: dataDir, DB_SCHEMA: "account_sync_demo", LOG_LEVEL: "info" }
        const status = yield* runCli(["status"], env)
        expect(status.code, status.stderr).toBe(0)
        expect(status.stdout).toMatch(/^Northwind Landscaping\s+active\s/m)
        // the reason does not fit whole beside the rest at 120 columns: a line of its own below the table, whole
        expect(status.stdout).toMatch(/^Bluebird Plumbing & Heating\s+disconnected\s/m)
        expect(status.stdout).toMatch(/^ {2}Bluebird Plumbing & Heating: disconnected: APP_DISCONNECT webhook \(\d{4}-\d\d-\d\dT[\d:.]+Z\)$/m)
        expect(status.stdout).toMatch(/^ {2}jobs\s+(full|incremental)\s+succeeded\s+(just now|\d+ (s|min) ago)/m)
        expect(status.stdout).not.toContain("Z2lk")
        for (const line of status.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(120)
        const json = yield* runCli(["status", "--json"], env)
        const parsed = JSON.parse(json.stdout) as { connections: Array<{ accountId: string; accountName: string; streams: Array<{ lastRun: { startedAt: string } | null }> }> }
        expect(parsed.connections.map((c) => c.accountName).sort()).toEqual(["Bluebird Plumbing & Heating", "Northwind Landscaping"])
        expect(parsed.connections[0]!.streams[0]!.lastRun!.startedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
        const query = yield* runCli(["query", lookAgain], env)
        expect(query.code, query.stderr).toBe(0)
        expect(query.stdout.split("\n")[0]).toMatch(/^job_number\s+title\s+total$/)
        // nothing new in the data directory, and the demo's key is the one kept
        expect(files()).toEqual(before)
        expect(fs.readFileSync(keyFile, "utf8")).toBe(keyBefore)
      }),
    240_000
  )
})

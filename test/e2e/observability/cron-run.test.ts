import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { runCli } from "../../support/cli.js"
import { TestSettings, connectAccount } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { promtoolAvailable, promtoolCheck } from "../../support/promtool.js"
import { syncHarness } from "../../support/syncHarness.js"

layer(syncHarness({ accounts: 1, jobs: 250, limits: { maxPoints: 10_000, restoreRate: 100_000 } }), {
  timeout: 90_000,
  excludeTestServices: true
})("a cron run (child process): metrics file and traces", (it) => {
  it.effect("backfill writes its counters to METRICS_FILE on exit, in Prometheus text format", () =>
    Effect.gen(function* () {
      const { accountId } = (yield* TestEmulator).accounts[0]!
      yield* connectAccount(accountId)
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-metrics-")), "account_sync.prom")
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings), METRICS_FILE: file }
      const result = yield* runCli(["backfill"], env)
      expect(result.code, result.stderr).toBe(0)
      const text = fs.readFileSync(file, "utf8")
      expect(text).toContain("# TYPE account_sync_rows_upserted_total counter")
      expect(text).toContain(`account_sync_rows_upserted_total{account_id="${accountId}"} 250`)
      expect(text).toMatch(new RegExp(`account_sync_runs_total\\{[^}]*outcome="succeeded"[^}]*\\} 1`))
      // and the state gauges, read from the database before it closed (a one-shot process has no scrape)
      expect(text).toMatch(new RegExp(`account_sync_stream_data_age_seconds\\{account_id="${accountId}",stream="jobs"\\} \\d+`))
      expect(text).toContain(`account_sync_stream_stale_after_seconds{account_id="${accountId}",stream="jobs"} 7200`)
      expect(text).toContain(`account_sync_account_failed_runs_in_a_row{account_id="${accountId}"} 0`)
      // Prometheus' own parser accepts the file (skipped only where promtool is not installed)
      if (promtoolAvailable) {
        const check = yield* promtoolCheck(text)
        expect(check.code, `promtool check metrics: ${check.output}`).toBe(0)
      } else {
        yield* Effect.logWarning("promtool is not installed (Debian package prometheus): METRICS_FILE not checked by Prometheus' parser")
      }
      // written atomically: no temp file left beside it
      expect(fs.readdirSync(path.dirname(file))).toEqual(["account_sync.prom"])

      // piped, at the default level: no page lines, one line for the stream's end, one line with the run's totals
      const quiet = yield* runCli(["backfill", "--restart"], { ...env, LOG_LEVEL: "info" })
      expect(quiet.code, quiet.stderr).toBe(0)
      const logs = quiet.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { message: string; annotations: Record<string, unknown> })
      expect(logs.filter((l) => l.message.includes("page landed"))).toEqual([])
      expect(logs.filter((l) => l.message === "jobs succeeded").map((l) => l.annotations.rows)).toEqual([250])
      const finished = logs.filter((l) => l.message === "backfill finished")
      expect(finished).toHaveLength(1)
      expect(finished[0]!.annotations).toMatchObject({ mode: "backfill", accounts: 1, synced: 1, failed: 0, rows: 250 })
      expect(finished[0]!.annotations.durationMs).toBeTypeOf("number")
      // and the summary on stdout: a line per stream, a total, the run's duration
      expect(quiet.stdout).toMatch(/^TOTAL\s+1 account\s+250\s/m)
      expect(quiet.stdout).toMatch(/^backfill took [\d.]+ s: 1 synced$/m)
      const json = yield* runCli(["backfill", "--json"], { ...env, LOG_LEVEL: "info" })
      const summary = JSON.parse(json.stdout) as { mode: string; durationMs: number; accounts: Array<{ accountId: string; streams: Array<{ stream: string; rows: number }> }>; totals: { rows: number } }
      expect(summary.accounts[0]!.accountId).toBe(accountId)
      expect(summary.accounts[0]!.streams.map((s) => s.stream)).toEqual(["jobs"])
      expect(summary.mode).toBe("backfill")
    })
  )

  it.scoped("with OTEL_EXPORTER_OTLP_ENDPOINT set, a run exports spans for the run, account, page and HTTP calls", () =>
    Effect.gen(function* () {
      const bodies: Array<string> = []
      const collector = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const server = http.createServer((request, response) => {
            let body = ""
            request.on("data", (chunk) => (body += chunk))
            request.on("end", () => {
              bodies.push(`${request.url} ${body}`)
              response.writeHead(200, { "content-type": "application/json" }).end("{}")
            })
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const port = (collector.address() as AddressInfo).port
      const { accountId } = (yield* TestEmulator).accounts[0]!
      yield* connectAccount(accountId)
      // the same receiver takes the alert webhook, whose URL holds its credential: a stream stale at once raises one
      const hook = `/services/T1/B1/${crypto.randomBytes(12).toString("hex")}`
      const env = {
        ...(yield* TestDatabase).env,
        ...(yield* TestSettings),
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        ALERT_WEBHOOK_URL: `http://127.0.0.1:${port}${hook}`,
        SYNC_EVERY: "1 millis",
        SYNC_INCREMENTAL_EVERY_WITH_EVENTS: "0 seconds",
        SYNC_STALE_MARGIN: "0 seconds"
      }
      const result = yield* runCli(["backfill", "--restart"], env)
      expect(result.code, result.stderr).toBe(0)
      const traces = bodies.filter((b) => b.startsWith("/v1/traces")).join("\n")
      for (const span of ["sync.run", "sync.account", "sync.stream", "sync.page", "http.client", "alerts.check"]) expect(traces).toContain(span)
      // the alert was sent, and its URL is in no span (the call to it is not traced) nor in the log
      expect(bodies.filter((b) => b.startsWith(`${hook} `)).join("\n")).toContain("is stale")
      expect(traces).not.toContain(hook)
      expect(result.stderr).not.toContain(hook)
    })
  )
})

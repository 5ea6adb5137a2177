import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
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
      // Prometheus' own parser accepts the file (skipped only where promtool is not installed)
      if (promtoolAvailable) {
        const check = yield* promtoolCheck(text)
        expect(check.code, `promtool check metrics: ${check.output}`).toBe(0)
      } else {
        yield* Effect.logWarning("promtool is not installed (Debian package prometheus): METRICS_FILE not checked by Prometheus' parser")
      }
      // written atomically: no temp file left beside it
      expect(fs.readdirSync(path.dirname(file))).toEqual(["account_sync.prom"])
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
      const env = {
        ...(yield* TestDatabase).env,
        ...(yield* TestSettings),
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`
      }
      const result = yield* runCli(["backfill", "--restart"], env)
      expect(result.code, result.stderr).toBe(0)
      const traces = bodies.filter((b) => b.startsWith("/v1/traces")).join("\n")
      for (const span of ["sync.run", "sync.account", "sync.stream", "sync.page", "http.client"]) expect(traces).toContain(span)
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { authServer } from "../../../src/serve/Server.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount, freePort } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { promtoolAvailable, promtoolCheck } from "../../support/promtool.js"
import { syncHarness } from "../../support/syncHarness.js"

/** The value of one sample line `name{...account_id="id"...} value`, 0 when absent. */
const sample = (text: string, name: string, accountId: string, extra: string = "") => {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}{`) && l.includes(`account_id="${accountId}"`) && l.includes(extra))
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0
}

const scrape = (port: number) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`)
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
  })

layer(syncHarness({ accounts: 1, jobs: 600, limits: { maxPoints: 5_000, restoreRate: 50_000 } }), {
  timeout: 60_000,
  excludeTestServices: true
})("serve /metrics", (it) => {
  it.scoped("after a sync the counters of the synced account have moved", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* Layer.launch(authServer({ port, host: "127.0.0.1" })).pipe(Effect.forkScoped)
      const { accountId } = (yield* TestEmulator).accounts[0]!
      yield* connectAccount(accountId)
      const ready = yield* scrape(port).pipe(Effect.retry({ times: 50 }), Effect.orDie)
      const before = ready.text

      const reports = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [accountId] })
      expect(reports[0]!.outcome).toBe("synced")

      const after = yield* scrape(port)
      expect(after.status).toBe(200)
      expect(after.type).toContain("text/plain")
      expect(after.text).toContain("# TYPE account_sync_rows_upserted_total counter")
      const moved = (name: string, extra?: string) => sample(after.text, name, accountId, extra) - sample(before, name, accountId, extra)
      expect(moved("account_sync_rows_upserted_total")).toBe(600)
      expect(moved("account_sync_pages_total")).toBe(reports[0]!.streams[0]!.counts.pages)
      // the stream's points, plus the run's small `account { id name }` query
      const points = moved("account_sync_query_cost_points_total")
      expect(points).toBeGreaterThanOrEqual(reports[0]!.streams[0]!.counts.costPoints)
      expect(points).toBeLessThan(reports[0]!.streams[0]!.counts.costPoints + 10)
      expect(moved("account_sync_runs_total", 'outcome="succeeded"')).toBe(1)
      // the state gauges, read from the database at the scrape: the stream was made current by this backfill
      expect(sample(after.text, "account_sync_stream_data_age_seconds", accountId, 'stream="jobs"')).toBeLessThan(60)
      expect(sample(after.text, "account_sync_stream_stale_after_seconds", accountId, 'stream="jobs"')).toBe(7200)
      expect(sample(after.text, "account_sync_connection_status", accountId, 'status="active"')).toBe(1)

      // Prometheus' own parser accepts the whole scrape (skipped only where promtool is not installed)
      if (promtoolAvailable) {
        const check = yield* promtoolCheck(after.text)
        expect(check.code, `promtool check metrics: ${check.output}`).toBe(0)
      } else {
        yield* Effect.logWarning("promtool is not installed (Debian package prometheus): /metrics not checked by Prometheus' parser")
      }
    })
  )
})

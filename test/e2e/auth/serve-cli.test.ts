import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, TestSettings, connectAccount, freePort } from "../../support/connector.js"
import { TestDatabase, TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTestWith, TestEmulator } from "../../support/emulator.js"
import { runCli, spawnCli } from "../../support/cli.js"

class ServePort extends Effect.Tag("test/ServePort")<ServePort, number>() {}

const Stack = AuthTest().pipe(
  Layer.provideMerge(
    EmulatorTestWith(
      Effect.map(ServePort, (port) => ({ redirectUri: `http://127.0.0.1:${port}/oauth/callback`, accounts: 2 }))
    )
  ),
  Layer.provideMerge(Layer.effect(ServePort, freePort)),
  Layer.provideMerge(TestDatabaseEnv)
)

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual" })
    return { status: response.status, location: response.headers.get("location"), body: await response.text() }
  })

layer(Stack, { timeout: 90_000, excludeTestServices: true })("serve and disconnect --all as commands (child processes)", (it) => {
  it.scoped("`serve --port` answers probes and metrics, connects an account through /oauth/start, exits 143 on SIGTERM", () =>
    Effect.gen(function* () {
      const port = yield* ServePort
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings) }
      const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
      const base = `http://127.0.0.1:${port}`
      const health = yield* get(`${base}/healthz`).pipe(
        Effect.catchAllDefect((e) => Effect.fail(e)),
        Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.intersect(Schedule.recurs(150)))),
        Effect.orDie
      )
      expect(health.status).toBe(200)
      expect((yield* get(`${base}/readyz`)).status).toBe(200)
      expect((yield* get(`${base}/metrics`)).status).toBe(200)

      const account = (yield* TestEmulator).accounts[0]!
      const start = yield* get(`${base}/oauth/start`)
      expect(start.status).toBe(302)
      const hinted = new URL(start.location!)
      hinted.searchParams.set("login_hint", account.accountId)
      const consent = yield* approveInBrowser(hinted.toString(), { accountId: account.accountId })
      const callback = yield* get(consent.location!)
      expect(callback.status, callback.body).toBe(200)
      const stored = yield* (yield* Connections).get(account.accountId)
      expect(stored._tag === "Some" && stored.value.status).toBe("active")

      serve.child.kill("SIGTERM")
      const exit = yield* serve.exit
      expect(exit.code).toBe(143)
    })
  )

  it.scoped("with METRICS_PORT, `serve` answers /metrics and /readyz there only, and prunes settled deliveries past WEBHOOK_EVENTS_RETENTION", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const insert = (id: string, state: string, daysAgo: number) => {
        const at = new Date(Date.now() - daysAgo * 86_400_000)
        return sql`
          INSERT INTO webhook_events (event_id, topic, app_id, account_id, sent_account_id, item_id, occurred_at, received_at, state, next_attempt_at, applied_at)
          VALUES (${id}, 'CLIENT_UPDATE', 'app', NULL, 'nobody', 'item', ${at}, ${at}, ${state}, ${at}, ${state === "applied" ? at : null})`
      }
      yield* insert("retention-old-unmatched", "unmatched", 8)
      yield* insert("retention-recent-unmatched", "unmatched", 1)
      const port = yield* freePort
      const metricsPort = yield* freePort
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings), METRICS_PORT: String(metricsPort), WEBHOOK_EVENTS_RETENTION: "7 days" }
      const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env)
      const priv = `http://127.0.0.1:${metricsPort}`
      const ready = yield* get(`${priv}/readyz`).pipe(
        Effect.catchAllDefect((e) => Effect.fail(e)),
        Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.intersect(Schedule.recurs(150)))),
        Effect.orDie
      )
      expect(ready.status).toBe(200)
      expect((yield* get(`${priv}/metrics`)).status).toBe(200)
      expect((yield* get(`http://127.0.0.1:${port}/metrics`)).status).toBe(404)
      expect((yield* get(`http://127.0.0.1:${port}/readyz`)).status).toBe(404)
      expect((yield* get(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)

      // pruned at start: the delivery settled 8 days ago goes, yesterday's stays
      const left = () => Effect.map(sql<{ event_id: string }>`SELECT event_id FROM webhook_events WHERE event_id LIKE 'retention-%'`, (r) => r.map((x) => x.event_id))
      yield* left().pipe(
        Effect.filterOrFail((ids) => !ids.includes("retention-old-unmatched")),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
      )
      expect(yield* left()).toEqual(["retention-recent-unmatched"])
      serve.child.kill("SIGTERM")
      expect((yield* serve.exit).code).toBe(143)
    })
  )

  it.effect("`disconnect --all` disconnects every connected account", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      for (const a of accounts) yield* connectAccount(a.accountId)
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings) }
      const result = yield* runCli(["disconnect", "--all"], env)
      expect(result.code, result.stderr).toBe(0)
      const all = yield* (yield* Connections).list()
      expect(all.map((c) => c.status)).toEqual(accounts.map(() => "disconnected"))
    })
  )
})

import { SqlClient } from "@effect/sql"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { definitions, scopesOf } from "../../../src/emulator/data/definitions.js"
import { Alerts } from "../../../src/health/AlertWebhook.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { later } from "../../support/clock.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { registerSecret } from "../../support/secretScan.js"
import { syncHarness } from "../../support/syncHarness.js"

// a local receiver standing in for a Slack incoming webhook: it answers as scripted (a status, or no answer at all)
const received: Array<{ readonly body: string; readonly contentType: string | undefined }> = []
let script: Array<number | "hang"> = []
const hanging: Array<http.ServerResponse> = []
const receiver = http.createServer((request, response) => {
  let body = ""
  request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
  request.on("end", () => {
    received.push({ body, contentType: request.headers["content-type"] })
    const next = script.shift() ?? 200
    if (next === "hang") hanging.push(response)
    else response.writeHead(next, { "content-type": "text/plain" }).end(next === 200 ? "ok" : "unavailable")
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
afterAll(() => {
  for (const response of hanging) response.destroy()
  receiver.close()
})
// the URL's last part is its credential, as in a Slack webhook URL: it must never be printed
const urlSecret = crypto.randomBytes(12).toString("hex")
registerSecret(urlSecret)
const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/services/T0001/B0001/${urlSecret}`

const harness = syncHarness({ accounts: 2, jobs: 10 }, { env: { ALERT_WEBHOOK_URL: webhookUrl, ALERT_WEBHOOK_TIMEOUT: "300 millis" } })

/** What the receiver got since `from`, each body decoded: always `{"text": ...}` and nothing else. */
const messagesSince = (from: number) =>
  received.slice(from).map((r) => {
    expect(r.contentType).toContain("application/json")
    const body = JSON.parse(r.body) as Record<string, unknown>
    expect(Object.keys(body)).toEqual(["text"])
    return body.text as string
  })

const hour = 3_600_000

layer(harness, { timeout: 90_000, excludeTestServices: true })("the alert webhook (ALERT_WEBHOOK_URL)", (it) => {
  it.effect("revoked, failing twice in a row and stale are each sent once, escaped, with nothing secret; retried on 503, after a timeout by a later check", () =>
    Effect.gen(function* () {
      const { accounts, admin, app } = yield* TestEmulator
      const [failing, healthy] = [accounts[0]!.accountId, accounts[1]!.accountId]
      const alerts = yield* Alerts
      const runner = yield* SyncRunner
      const sql = yield* SqlClient.SqlClient
      // an account whose token lacks read_jobs: its jobs stream fails every run
      yield* admin.updateApp({ clientId: app.clientId, scopes: ["read_clients"] })
      yield* connectAccount(failing)
      yield* admin.updateApp({ clientId: app.clientId, scopes: [...scopesOf(definitions)] })
      yield* connectAccount(healthy)
      // one whose name is outside text a chat would format (and a terminal would act on)
      const odd = yield* admin.createAccount({ name: "Smith & <Sons> \u001b[31mred", jobs: 5 })
      yield* connectAccount(odd.accountId)
      yield* admin.marketplaceDisconnect({ clientId: app.clientId, accountId: odd.accountId })

      // first run: one failure (not yet an alert), one connection revoked; the first answer is a 503, then taken
      const byAccount = (reports: ReadonlyArray<{ readonly accountId: string; readonly outcome: string }>) => Object.fromEntries(reports.map((r) => [r.accountId, r.outcome]))
      expect(byAccount(yield* runner.run({ mode: "sync" }))).toEqual({ [failing]: "failed", [healthy]: "synced", [odd.accountId]: "needs-reconnect" })
      script = [503, 200]
      let from = received.length
      yield* alerts.check
      const first = messagesSince(from)
      expect(first).toHaveLength(2)
      expect(first[1]).toBe(first[0])
      const lines = first[0]!.split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toBe("account-sync: 1 new alert")
      expect(lines[1]).toMatch(new RegExp(`^• account Smith &amp; &lt;Sons&gt; \\\\u001b\\[31mred \\(${odd.accountId.replace(/[+/=]/g, "\\$&")}\\) is revoked: .+; reconnect it \\(account-sync connect\\)$`))
      expect(first[0]).not.toContain("\u001b")

      // second run: the same account fails again, now twice in a row; the webhook does not answer (timeouts)
      expect(byAccount(yield* runner.run({ mode: "sync" }))[failing]).toBe("failed")
      script = ["hang", "hang", "hang", "hang"]
      from = received.length
      yield* alerts.check
      expect(received.length - from).toBe(4)
      const [notice] = yield* sql<{ notified_at: Date | null }>`SELECT notified_at FROM alert_notices WHERE account_id = ${failing} AND condition = 'failing'`
      expect(notice!.notified_at).toBeNull()
      // a check right after does not send it again at once (the attempt may still land); one a few minutes later does
      from = received.length
      yield* alerts.check
      expect(received.length).toBe(from)
      yield* later(6 * 60_000)(alerts.check)
      const second = messagesSince(from)
      expect(second).toHaveLength(1)
      expect(second[0]).toContain("account-sync: 1 new alert")
      expect(second[0]).toMatch(new RegExp(`• account [^\\n]+ \\(${failing.replace(/[+/=]/g, "\\$&")}\\) failed 2 runs in a row; the last: jobs: `))
      expect(second[0]).toContain("permission denied")

      // a third failure raises nothing new: the condition still holds and was sent
      expect(byAccount(yield* runner.run({ mode: "sync" }))[failing]).toBe("failed")
      from = received.length
      yield* later(6 * 60_000)(alerts.check)
      expect(received.length).toBe(from)

      // three hours on with no run: the active accounts' jobs streams are stale (the revoked one is not synced: no staleness)
      yield* later(3 * hour)(alerts.check)
      const third = messagesSince(from)
      expect(third).toHaveLength(1)
      expect(third[0]).toContain("account-sync: 2 new alerts")
      expect(third[0]).toContain(`stream jobs of account`)
      expect(third[0]).toContain(`(${healthy}) is stale: last known current `)
      expect(third[0]).toContain(`(${failing}) is stale: last known current never`)
      expect(third[0]).not.toContain(`(${odd.accountId}) is stale`)

      // nothing secret in any message: no token, no client secret, no key, not the webhook URL
      const settings = yield* TestSettings
      for (const r of received) {
        expect(r.body).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\./)
        for (const secret of [settings.SERVICE_CLIENT_SECRET!, settings.TOKEN_ENCRYPTION_KEY!, urlSecret]) expect(r.body).not.toContain(secret)
      }
    })
  )
})

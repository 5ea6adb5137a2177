import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as crypto from "node:crypto"
import { keyIdOf } from "../../../src/auth/TokenKey.js"
import { runCli } from "../../support/cli.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { registerSecret } from "../../support/secretScan.js"
import { syncHarness } from "../../support/syncHarness.js"
import { storeUnderForeignKey } from "../../support/tokenKeys.js"

const newKey = () => {
  const base64 = crypto.randomBytes(32).toString("base64")
  registerSecret(base64)
  return { base64, id: keyIdOf(Redacted.make(Buffer.from(base64, "base64"))) }
}

layer(syncHarness({ accounts: 2, jobs: 20 }), { timeout: 120_000, excludeTestServices: true })("token keys (child processes)", (it) => {
  it.effect("sync: an account whose token cannot be decrypted fails alone (exit 1, one line, no stack); the other is synced and recorded", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const [good, bad] = [accounts[0]!.accountId, accounts[1]!.accountId]
      const goodName = accounts[0]!.name
      yield* connectAccount(good)
      yield* connectAccount(bad)
      yield* storeUnderForeignKey(bad)
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings) }

      const result = yield* runCli(["sync"], env)
      expect(result.code, result.stderr).toBe(1)
      // the summary names accounts (their names are unique): the good one's first stream line says synced
      expect(result.stdout).toMatch(new RegExp(`${goodName}\\s.*\\ssynced\\s`))
      expect(result.stderr).toContain(`account ${bad}: token cannot be decrypted with the configured key`)
      expect(result.stderr).not.toMatch(/\n\s+at /)
      const sql = yield* SqlClient.SqlClient
      const runs = yield* sql<{ account_id: string; outcome: string }>`SELECT account_id, outcome FROM sync_runs ORDER BY account_id`
      expect(runs.map((r) => [r.account_id, r.outcome]).sort()).toEqual([[bad, "failed"], [good, "succeeded"]].sort())
    })
  )

  it.effect("a process with another TOKEN_ENCRYPTION_KEY than the stored tokens' refuses to start: one configuration line, exit 2; status, which decrypts nothing, still answers", () =>
    Effect.gen(function* () {
      const settings = yield* TestSettings
      const env = { ...(yield* TestDatabase).env, ...settings }
      const stored = keyIdOf(Redacted.make(Buffer.from(settings.TOKEN_ENCRYPTION_KEY!, "base64")))
      const wrong = newKey()
      for (const command of [["sync"], ["serve", "--port", "0"], ["webhooks", "subscribe"]]) {
        const result = yield* runCli(command, { ...env, TOKEN_ENCRYPTION_KEY: wrong.base64 })
        expect(result.code, `${command[0]}: ${result.stderr}`).toBe(2)
        const lines = result.stderr.trim().split("\n").filter((l) => !l.startsWith("{"))
        expect(lines).toEqual([
          `TOKEN_ENCRYPTION_KEY is invalid (in .env or the environment): the stored tokens are written under key id ${stored}, which is not this process's key (key id ${wrong.id}); set TOKEN_ENCRYPTION_KEY to that key, or to rotate, list it in TOKEN_ENCRYPTION_OLD_KEYS`
        ])
        expect(result.stderr + result.stdout).not.toContain(wrong.base64)
        expect(result.stderr + result.stdout).not.toContain(settings.TOKEN_ENCRYPTION_KEY!)
      }
      const status = yield* runCli(["status"], { ...env, TOKEN_ENCRYPTION_KEY: wrong.base64 })
      expect(status.code, status.stderr).toBe(0)
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ key_id: string }>`SELECT key_id FROM token_keys`).map((r) => r.key_id)).toEqual([stored])
    })
  )

  it.effect("rotation from the command line: the new key with the old one listed syncs; then the old key alone is refused", () =>
    Effect.gen(function* () {
      const settings = yield* TestSettings
      const { accounts } = yield* TestEmulator
      const good = accounts[0]!.accountId
      const env = { ...(yield* TestDatabase).env, ...settings }
      const next = newKey()
      const rotated = yield* runCli(["sync", "--account", good], { ...env, TOKEN_ENCRYPTION_KEY: next.base64, TOKEN_ENCRYPTION_OLD_KEYS: settings.TOKEN_ENCRYPTION_KEY! })
      expect(rotated.code, rotated.stderr).toBe(0)
      expect(rotated.stderr).toContain(`token key rotated: the current key is now ${next.id}`)
      const old = yield* runCli(["sync"], env)
      expect(old.code, old.stderr).toBe(2)
      expect(old.stderr).toContain(`written under key id ${next.id}`)
    })
  )
})

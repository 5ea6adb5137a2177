import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "../../support/cli.js"
import { connectAccount, newTokenKey, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

const lines = (stdout: string) => stdout.trimEnd().split("\n")

layer(syncHarness({ accounts: 1 }), { timeout: 180_000, excludeTestServices: true })("account-sync doctor", (it) => {
  it.effect("one line per check: all ok against the emulator and a real Postgres; each wrong setting fails its own line, exit 1", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      yield* connectAccount(accounts[0]!.accountId)
      const env: Record<string, string> = { ...(yield* TestSettings), LOG_LEVEL: "warn" }
      const good = yield* runCli(["doctor"], env)
      expect(good.code, good.stdout + good.stderr).toBe(0)
      const checks = lines(good.stdout).map((l) => l.split(/\s{2,}/).slice(0, 2).join(" "))
      expect(checks).toEqual(["ok Node", "ok configuration", "ok Postgres", "ok privileges", "ok token key", "ok service", "ok redirect URI"])
      expect(good.stdout).toMatch(/ok {4}token key {6}key id [0-9a-f]{8}, the key the stored tokens are written under/)

      // a redirect URI the app does not have, another token key, nothing listening at the service: each its line
      const bad = yield* runCli(["doctor"], { ...env, SERVICE_REDIRECT_URI: "http://127.0.0.1:9/elsewhere", TOKEN_ENCRYPTION_KEY: newTokenKey() })
      expect(bad.code).toBe(1)
      expect(lines(bad.stdout).filter((l) => l.startsWith("FAIL")).map((l) => l.split(/\s{2,}/)[1])).toEqual(["token key", "redirect URI"])
      expect(bad.stdout).toMatch(/FAIL {2}redirect URI {3}the service refused the authorization request \(HTTP 400/)
      expect(bad.stderr).toContain("doctor: 2 check(s) failed")
      const gone = yield* runCli(["doctor"], { ...env, SERVICE_BASE_URL: "http://127.0.0.1:9" })
      expect(gone.stdout).toMatch(/FAIL {2}service {8}http:\/\/127\.0\.0\.1:9 \(SERVICE_BASE_URL\) does not answer/)
      // the password of DATABASE_URL is never printed
      const withPassword = new URL(env.DATABASE_URL!)
      withPassword.password = "s3cret-pw"
      expect((yield* runCli(["doctor"], { ...env, DATABASE_URL: withPassword.toString() })).stdout).not.toContain("s3cret-pw")
    })
  )
})

import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ServiceSettings, ServiceSettingsFromEnv } from "../../../src/auth/ServiceSettings.js"
import { formatConfigError } from "../../../src/config.js"

const service = {
  SERVICE_BASE_URL: "https://api.example.com/",
  SERVICE_CLIENT_ID: "cid",
  SERVICE_CLIENT_SECRET: "the-client-secret",
  SERVICE_REDIRECT_URI: "http://127.0.0.1:8080/oauth/callback"
}

const load = (env: Record<string, string>) =>
  ServiceSettings.pipe(
    Effect.provide(ServiceSettingsFromEnv),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

const failureLine = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a configuration failure")
  return formatConfigError(exit.cause.error as never)
}

describe("ServiceSettingsFromEnv", () => {
  it.effect("with DATABASE_URL, a missing or malformed TOKEN_ENCRYPTION_KEY fails with one line naming it", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.exit(load({ ...service, DATABASE_URL: "postgres://db/x" }))
      expect(failureLine(missing)).toMatch(/^configuration: TOKEN_ENCRYPTION_KEY is missing/)
      const short = yield* Effect.exit(load({ ...service, DATABASE_URL: "postgres://db/x", TOKEN_ENCRYPTION_KEY: "c2hvcnQ=" }))
      const line = failureLine(short)
      expect(line).toContain("TOKEN_ENCRYPTION_KEY: expected 32 bytes encoded as base64")
      expect(line.split("\n")).toHaveLength(1)
      expect(line).not.toContain("c2hvcnQ=")
    })
  )

  it.effect("a missing client secret is named, not hidden", () =>
    Effect.gen(function* () {
      const { SERVICE_CLIENT_SECRET: _, ...rest } = service
      const exit = yield* Effect.exit(load({ ...rest, TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") }))
      expect(failureLine(exit)).toContain("SERVICE_CLIENT_SECRET is missing")
    })
  )

  it.effect("embedded (no DATABASE_URL): a key is generated once at <DATA_DIR>/token-encryption.key, mode 0600, then reused", () =>
    Effect.gen(function* () {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-key-"))
      try {
        const first = yield* load({ ...service, DATA_DIR: dataDir })
        const file = path.join(dataDir, "token-encryption.key")
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
        expect(Redacted.value(first.encryptionKey)).toHaveLength(32)
        const second = yield* load({ ...service, DATA_DIR: dataDir })
        expect(Redacted.value(second.encryptionKey).equals(Redacted.value(first.encryptionKey))).toBe(true)
        expect(first.baseUrl).toBe("https://api.example.com")
        expect(String(first.clientSecret)).not.toContain("the-client-secret")
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
    })
  )
})

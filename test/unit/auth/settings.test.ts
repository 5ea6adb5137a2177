import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ServiceEndpoint } from "../../../src/api/ServiceEndpoint.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenKey } from "../../../src/auth/TokenKey.js"
import { formatConfigError } from "../../../src/config.js"

const service = {
  SERVICE_BASE_URL: "https://api.example.com/",
  SERVICE_CLIENT_ID: "cid",
  SERVICE_CLIENT_SECRET: "the-client-secret",
  SERVICE_REDIRECT_URI: "http://127.0.0.1:8080/oauth/callback"
}

const load = (env: Record<string, string>) =>
  Effect.all({ client: OAuthClient, encryptionKey: TokenKey, endpoint: ServiceEndpoint }).pipe(
    Effect.map(({ client, encryptionKey, endpoint }) => ({ ...client, encryptionKey, endpoint })),
    Effect.provide(Layer.mergeAll(OAuthClient.layer, TokenKey.layer, ServiceEndpoint.layer)),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

const failureLine = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a configuration failure")
  return formatConfigError(exit.cause.error as never)
}

describe("settings from the environment (OAuthClient, TokenKey, ServiceEndpoint)", () => {
  it.effect("with DATABASE_URL, a missing or malformed TOKEN_ENCRYPTION_KEY fails with one line naming it", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.exit(load({ ...service, DATABASE_URL: "postgres://db/x" }))
      expect(failureLine(missing)).toBe(
        "TOKEN_ENCRYPTION_KEY is not set: DATABASE_URL is set, so the tokens need a key of your own: generate one with `openssl rand -base64 32` and put it in .env (see config/.env.example)"
      )
      const short = yield* Effect.exit(load({ ...service, DATABASE_URL: "postgres://db/x", TOKEN_ENCRYPTION_KEY: "c2hvcnQ=" }))
      const line = failureLine(short)
      expect(line).toContain("TOKEN_ENCRYPTION_KEY is invalid (in .env or the environment): expected 32 bytes encoded as base64")
      expect(line.split("\n")).toHaveLength(1)
      expect(line).not.toContain("c2hvcnQ=")
    })
  )

  it.effect("a missing client secret is named, not hidden", () =>
    Effect.gen(function* () {
      const { SERVICE_CLIENT_SECRET: _, ...rest } = service
      const exit = yield* Effect.exit(load({ ...rest, TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") }))
      expect(failureLine(exit)).toBe("SERVICE_CLIENT_SECRET is not set: put it in .env (see config/.env.example)")
    })
  )

  it.effect("embedded (no DATABASE_URL): a key is generated once at <DATA_DIR>/token-encryption.key, mode 0600, then reused", () =>
    Effect.gen(function* () {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-key-"))
      try {
        const first = yield* load({ ...service, DATA_DIR: dataDir })
        const file = path.join(dataDir, "token-encryption.key")
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
        expect(Redacted.value(first.encryptionKey.current.secret)).toHaveLength(32)
        expect(first.encryptionKey.old).toEqual([])
        const second = yield* load({ ...service, DATA_DIR: dataDir })
        expect(Redacted.value(second.encryptionKey.current.secret).equals(Redacted.value(first.encryptionKey.current.secret))).toBe(true)
        expect(second.encryptionKey.current.id).toBe(first.encryptionKey.current.id)
        expect(first.baseUrl).toBe("https://api.example.com")
        expect(String(first.clientSecret)).not.toContain("the-client-secret")
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
    })
  )

  it.effect("one setting per thing: GRAPHQL_REQUEST_TIMEOUT bounds a GraphQL request, TOKEN_REQUEST_TIMEOUT a token request", () =>
    Effect.gen(function* () {
      const key = Buffer.alloc(32, 2).toString("base64")
      const defaults = yield* load({ ...service, TOKEN_ENCRYPTION_KEY: key })
      expect(Duration.toMillis(defaults.endpoint.requestTimeout)).toBe(30_000)
      expect(Duration.toMillis(defaults.requestTimeout)).toBe(10_000)
      const set = yield* load({ ...service, TOKEN_ENCRYPTION_KEY: key, GRAPHQL_REQUEST_TIMEOUT: "45 seconds", TOKEN_REQUEST_TIMEOUT: "3 seconds" })
      expect(Duration.toMillis(set.endpoint.requestTimeout)).toBe(45_000)
      expect(Duration.toMillis(set.requestTimeout)).toBe(3_000)
    })
  )
})

import { jobsOnlySettings } from "./jobsOnly.js"
import { Context, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import * as net from "node:net"
import { AuthLayer } from "../../src/cli/app.js"
import { callbackParams, OAuthFlow } from "../../src/auth/OAuthFlow.js"
import { approveInBrowser } from "./browser.js"
import { type Env, withEnv } from "./config.js"
import { TestDatabase } from "./database.js"
import { TestEmulator, type TestEmulatorShape } from "./emulator.js"
import { registerSecret } from "./secretScan.js"

/** A fresh random token encryption key (base64), one the suite must never print. */
export const newTokenKey = (): string => {
  const key = crypto.randomBytes(32).toString("base64")
  registerSecret(key)
  return key
}

/**
 * The settings of the connector for the emulator's app, as environment variables (what a child process gets, and
 * what the in-process layers read through Config): service address, client credentials, callback, a random token
 * key and test-sized timeouts. `overrides` replaces any of them (a new client secret, another base URL).
 */
export const connectorEnv = (emulator: TestEmulatorShape, overrides: Env = {}): Env => ({
  SERVICE_BASE_URL: emulator.baseUrl,
  SERVICE_CLIENT_ID: emulator.app.clientId,
  SERVICE_APP_ID: emulator.app.appId,
  SERVICE_CLIENT_SECRET: emulator.app.clientSecret,
  SERVICE_REDIRECT_URI: emulator.app.redirectUri,
  SERVICE_GRAPHQL_VERSION: "2025-01-20",
  TOKEN_ENCRYPTION_KEY: newTokenKey(),
  TOKEN_REQUEST_TIMEOUT: "5 seconds",
  GRAPHQL_REQUEST_TIMEOUT: "5 seconds",
  // the jobs pipeline's tests sync jobs alone (the whole-account tests set SYNC_STREAMS and SYNC_EXCLUDE_FIELDS empty)
  ...jobsOnlySettings,
  ...overrides
})

/** Every setting of the test: the connector's for the emulator, the test database's, then `overrides`. */
export const TestEnv = (overrides: Env = {}) =>
  Effect.gen(function* () {
    const emulator = yield* TestEmulator
    const db = yield* TestDatabase
    return { ...connectorEnv(emulator), ...db.env, ...overrides } as Env
  })

/** The settings a test's layers were built with (to hand to a child process, or to change one of them). */
export class TestSettings extends Context.Tag("test/TestSettings")<TestSettings, Env>() {}

/** The application's auth services (the program's own assembly) configured by `env`. */
export const authLayerFor = (env: Env) => AuthLayer.pipe(Layer.provide(withEnv(env)))

/**
 * The auth services configured for the TestEmulator's app and the TestDatabase; the settings are served as the
 * `Env` of the layer, so a test can hand the same to a child process. Needs TestEmulator and TestDatabase.
 */
export const AuthTest = (overrides: Env = {}) =>
  Layer.unwrapEffect(Effect.map(TestEnv(overrides), (env) => authLayerFor(env).pipe(Layer.provideMerge(Layer.succeed(TestSettings, env)))))

/**
 * Connects `accountId` through the real code flow with PKCE, as `connect` does: authorization URL, the admin of
 * `accountId` approves (login_hint picks them), the redirect's state is checked, the code exchanged, the account
 * identified and stored. Returns the stored connection.
 */
export const connectAccount = (accountId: string, options: { readonly pkce?: boolean } = {}) =>
  Effect.gen(function* () {
    const flow = yield* OAuthFlow
    const expected = yield* flow.begin({ pkce: options.pkce ?? true })
    const url = new URL(expected.url)
    url.searchParams.set("login_hint", accountId)
    const answer = yield* approveInBrowser(url.toString(), { accountId })
    if (answer.location === null) return yield* Effect.dieMessage(`the authorization endpoint did not redirect (HTTP ${answer.status})`)
    return yield* flow.completeExpected(expected, callbackParams(new URL(answer.location)))
  })

/** A TCP port that was free a moment ago (for a listener whose URL must be known before it starts). */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as net from "node:net"
import { AuthServicesLive } from "../../src/auth/AuthLive.js"
import { callbackParams, OAuthFlow } from "../../src/auth/OAuthFlow.js"
import { ServiceSettings, type ServiceSettingsShape } from "../../src/auth/ServiceSettings.js"
import { approveInBrowser } from "./browser.js"
import { TestEmulator, type TestEmulatorShape } from "./emulator.js"
import { registerSecret } from "./secretScan.js"

/**
 * The connector's auth side wired to the test emulator and the test database: ServiceSettings from the emulator's
 * app (and a random token key), the real Connections, TokenStore, AccessTokensLive, OAuthFlow, DisconnectEvents.
 */

/** ServiceSettings for the emulator's app; `overrides` e.g. a new client secret after regenerateSecret. */
export const settingsFor = (emulator: TestEmulatorShape, overrides: Partial<ServiceSettingsShape> = {}): ServiceSettingsShape => {
  const encryptionKey = crypto.randomBytes(32)
  registerSecret(encryptionKey.toString("base64"))
  return {
  baseUrl: emulator.baseUrl,
  clientId: emulator.app.clientId,
  clientSecret: Redacted.make(emulator.app.clientSecret),
  redirectUri: emulator.app.redirectUri,
  graphqlVersion: "2025-01-20",
  encryptionKey: Redacted.make(encryptionKey),
  refreshSkew: Duration.minutes(5),
  requestTimeout: Duration.seconds(5),
  ...overrides
  }
}

/** The environment a child process (`node bin/account-sync.mjs ...`) needs for the same settings. */
export const settingsEnv = (settings: ServiceSettingsShape): Record<string, string> => ({
  SERVICE_BASE_URL: settings.baseUrl,
  SERVICE_CLIENT_ID: settings.clientId,
  SERVICE_CLIENT_SECRET: Redacted.value(settings.clientSecret),
  SERVICE_REDIRECT_URI: settings.redirectUri,
  SERVICE_GRAPHQL_VERSION: settings.graphqlVersion,
  TOKEN_ENCRYPTION_KEY: Redacted.value(settings.encryptionKey).toString("base64")
})

/** Auth services over given settings; needs a SqlClient (e.g. TestDatabaseLive). */
export const authLayerWith = (settings: ServiceSettingsShape) =>
  AuthServicesLive.pipe(Layer.provideMerge(Layer.succeed(ServiceSettings, settings)), Layer.provideMerge(NodeHttpClient.layerUndici))

/** Auth services for the TestEmulator's app; needs TestEmulator and a SqlClient. */
export const AuthTest = Layer.unwrapEffect(Effect.map(TestEmulator, (emulator) => authLayerWith(settingsFor(emulator))))

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

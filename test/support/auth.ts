import { Duration, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import * as crypto from "node:crypto"
import { ServiceSettings, type ServiceSettingsShape } from "../../src/auth/ServiceSettings.js"

/** Settings for tests that never reach the service (Postgres only). */
export const offlineSettings = (overrides: Partial<ServiceSettingsShape> = {}): ServiceSettingsShape => ({
  baseUrl: "http://127.0.0.1:9",
  clientId: "client-offline",
  clientSecret: Redacted.make("offline-secret-" + crypto.randomBytes(8).toString("hex")),
  redirectUri: "http://127.0.0.1:9/oauth/callback",
  graphqlVersion: "2025-01-20",
  encryptionKey: Redacted.make(crypto.randomBytes(32)),
  refreshSkew: Duration.minutes(5),
  requestTimeout: Duration.seconds(5),
  ...overrides
})

export const settingsLayer = (settings: ServiceSettingsShape) => Layer.succeed(ServiceSettings, settings)

/** Every log line (message, annotations and cause, as logfmt) of the fibers it is provided to, at every level. */
export const makeLogCapture = () => {
  const lines: Array<string> = []
  const capture = Logger.make((options) => {
    lines.push(Logger.logfmtLogger.log(options))
  })
  const layer = Layer.mergeAll(Logger.replace(Logger.defaultLogger, capture), Logger.minimumLogLevel(LogLevel.All))
  return { lines, layer }
}

/** Fails the test with the offending line when a log line contains any of `secrets`. */
export const assertNoSecretsIn = (lines: ReadonlyArray<string>, secrets: ReadonlyArray<string>) =>
  Effect.sync(() => {
    for (const line of lines) {
      for (const secret of secrets) {
        if (secret.length >= 8 && line.includes(secret)) {
          throw new Error(`a log line contains a secret (${secret.slice(0, 4)}...): ${line.replace(secret, "<SECRET>")}`)
        }
      }
      // any JWT-looking value
      if (/eyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{5,}/.test(line)) throw new Error(`a log line contains a JWT: ${line.slice(0, 80)}...`)
    }
  })

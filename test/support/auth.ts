import { Effect, Layer, Logger, LogLevel } from "effect"
import * as crypto from "node:crypto"
import type { Env } from "./config.js"
import { newTokenKey } from "./connector.js"

/** Settings for tests that never reach the service (Postgres only): a service address nobody answers on. */
export const offlineEnv = (overrides: Env = {}): Env => ({
  SERVICE_BASE_URL: "http://127.0.0.1:9",
  SERVICE_CLIENT_ID: "client-offline",
  SERVICE_CLIENT_SECRET: "offline-secret-" + crypto.randomBytes(8).toString("hex"),
  SERVICE_REDIRECT_URI: "http://127.0.0.1:9/oauth/callback",
  TOKEN_ENCRYPTION_KEY: newTokenKey(),
  TOKEN_REQUEST_TIMEOUT: "5 seconds",
  GRAPHQL_REQUEST_TIMEOUT: "5 seconds",
  ...overrides
})

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

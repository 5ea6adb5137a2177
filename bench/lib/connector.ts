import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import * as crypto from "node:crypto"
import { type CostBudget, CostBudgetLive } from "../../src/api/CostBudget.js"
import { ServiceClientLive } from "../../src/api/ServiceClient.js"
import { AuthServicesLive } from "../../src/auth/AuthLive.js"
import { callbackParams, OAuthFlow } from "../../src/auth/OAuthFlow.js"
import { ServiceSettings, type ServiceSettingsShape } from "../../src/auth/ServiceSettings.js"
import { Progress } from "../../src/sync/Progress.js"
import { RunsLive } from "../../src/sync/Runs.js"
import { SyncRunnerLive } from "../../src/sync/SyncRunner.js"
import { defaultSyncSettings, SyncSettings } from "../../src/sync/SyncSettings.js"
import { WarehouseLive } from "../../src/sync/Warehouse.js"
import { approveInBrowser } from "../../test/support/browser.js"
import { freshSchemaLayer } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"

/** The connector's settings for the emulator child's app, with a random token encryption key. */
export const settingsFor = (emulator: EmulatorProcess, encryptionKey: Buffer = crypto.randomBytes(32)): ServiceSettingsShape => ({
  baseUrl: emulator.baseUrl,
  clientId: emulator.clientId,
  clientSecret: Redacted.make(emulator.clientSecret),
  redirectUri: emulator.redirectUri,
  graphqlVersion: "2025-01-20",
  encryptionKey: Redacted.make(encryptionKey),
  refreshSkew: Duration.minutes(5),
  requestTimeout: Duration.seconds(10)
})

/** The environment a `node bin/account-sync.mjs backfill|sync` child needs for the same settings and schema. */
export const childEnv = (settings: ServiceSettingsShape, databaseUrl: string, schema: string): Record<string, string> => ({
  SERVICE_BASE_URL: settings.baseUrl,
  SERVICE_CLIENT_ID: settings.clientId,
  SERVICE_CLIENT_SECRET: Redacted.value(settings.clientSecret),
  SERVICE_REDIRECT_URI: settings.redirectUri,
  SERVICE_GRAPHQL_VERSION: settings.graphqlVersion,
  TOKEN_ENCRYPTION_KEY: Redacted.value(settings.encryptionKey).toString("base64"),
  DATABASE_URL: databaseUrl,
  DB_SCHEMA: schema
})

const SilentProgress = Layer.succeed(Progress, Progress.of({ report: () => Effect.void }))

/**
 * The real connector in this process: SyncRunner, ServiceClient, Warehouse, Runs, the auth services
 * (AccessTokensLive, TokenStore, OAuthFlow) over a fresh schema; only the CostBudget is the caller's choice.
 */
export const connectorLayer = (options: {
  readonly settings: ServiceSettingsShape
  readonly schema: string
  readonly budget?: Layer.Layer<CostBudget>
  readonly concurrency?: number
  readonly keepSchema?: boolean
}) => {
  const auth = AuthServicesLive.pipe(
    Layer.provideMerge(Layer.mergeAll(Layer.succeed(ServiceSettings, options.settings), NodeHttpClient.layerUndici))
  )
  return SyncRunnerLive.pipe(
    Layer.provideMerge(Layer.mergeAll(ServiceClientLive, WarehouseLive, RunsLive)),
    Layer.provideMerge(options.budget ?? CostBudgetLive),
    Layer.provide(
      Layer.mergeAll(SilentProgress, Layer.succeed(SyncSettings, { ...defaultSyncSettings, concurrency: options.concurrency ?? 4 }))
    ),
    Layer.provideMerge(auth),
    Layer.provideMerge(freshSchemaLayer(options.schema, { maxConnections: Math.max(10, (options.concurrency ?? 4) + 4), keep: options.keepSchema })),
    Layer.provideMerge(Logger.minimumLogLevel(LogLevel.Warning))
  )
}

/** The real authorization code flow with PKCE; the emulator auto-approves for `login_hint`. */
export const connectAccount = (accountId: string) =>
  Effect.gen(function* () {
    const flow = yield* OAuthFlow
    const expected = yield* flow.begin({ pkce: true })
    const url = new URL(expected.url)
    url.searchParams.set("login_hint", accountId)
    const answer = yield* approveInBrowser(url.toString(), { accountId })
    if (answer.location === null) {
      return yield* new BenchError({ step: `connect ${accountId}`, reason: `the authorization endpoint did not redirect (HTTP ${answer.status})` })
    }
    return yield* flow.completeExpected(expected, callbackParams(new URL(answer.location)))
  })

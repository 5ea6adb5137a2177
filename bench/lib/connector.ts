import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Logger, LogLevel } from "effect"
import * as crypto from "node:crypto"
import type { CostBudget } from "../../src/api/CostBudget.js"
import { makeSyncLayer } from "../../src/cli/app.js"
import { dropSchemaAndQueryRole } from "../../src/db/queryRole.js"
import { callbackParams, OAuthFlow } from "../../src/auth/OAuthFlow.js"
import { TracingLive } from "../../src/observability/tracing.js"
import { ProgressSilent } from "../../src/run/Progress.js"
import { approveInBrowser } from "../../test/support/browser.js"
import { benchDatabaseUrl } from "./database.js"
import { BenchError } from "./errors.js"
import type { EmulatorProcess } from "./emulatorProcess.js"

import { jobsOnlySettings } from "../../test/support/jobsOnly.js"

export type Env = Readonly<Record<string, string>>

/** The connector's settings for the emulator child's app (a random token encryption key), as environment variables. */
export const settingsFor = (emulator: EmulatorProcess): Env => ({
  SERVICE_BASE_URL: emulator.baseUrl,
  SERVICE_CLIENT_ID: emulator.clientId,
  SERVICE_APP_ID: emulator.appId,
  SERVICE_CLIENT_SECRET: emulator.clientSecret,
  SERVICE_REDIRECT_URI: emulator.redirectUri,
  SERVICE_GRAPHQL_VERSION: "2025-01-20",
  TOKEN_ENCRYPTION_KEY: crypto.randomBytes(32).toString("base64"),
  // the jobs benchmarks measure the jobs pipeline alone, as they have from the start (wholeAccount clears these)
  ...jobsOnlySettings
})

/** The environment a `node bin/account-sync.mjs backfill|sync` child needs for the same settings and schema. */
export const childEnv = (settings: Env, databaseUrl: string, schema: string): Env => ({ ...settings, DATABASE_URL: databaseUrl, DB_SCHEMA: schema })


/**
 * The real connector in this process, as the program assembles it (cli/app.ts), configured through its Config path:
 * SyncRunner, ServiceClient, Warehouse, the auth services, over a fresh schema (dropped after with the job queue's
 * schema beside it, unless `keepSchema`).
 * Only the CostBudget may be the caller's. The bench's own pool is named `account-sync-bench`, so chaos's
 * pg_terminate_backend (aimed at `account-sync`) never hits it.
 */
export const connectorLayer = (options: {
  readonly settings: Env
  readonly schema: string
  readonly budget?: Layer.Layer<CostBudget>
  readonly concurrency?: number
  readonly keepSchema?: boolean
  /** The pool's application_name (default `account-sync-bench`). */
  readonly applicationName?: string
}) => {
  const env: Env = {
    ...childEnv(options.settings, benchDatabaseUrl(), options.schema),
    DATABASE_APPLICATION_NAME: options.applicationName ?? "account-sync-bench",
    DATABASE_POOL_SIZE: String(Math.max(10, (options.concurrency ?? 4) + 4)),
    SYNC_CONCURRENCY: String(options.concurrency ?? 4)
  }
  const dropAfter = Layer.scopedDiscard(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      if (options.keepSchema) return
      yield* Effect.addFinalizer(() =>
        dropSchemaAndQueryRole(options.schema).pipe(
          // and the job queue's (pg-boss) schema beside it, when workers made one (scale, chaos)
          Effect.zipRight(sql.unsafe(`DROP SCHEMA IF EXISTS ${options.schema}_queue CASCADE`).pipe(Effect.ignore)),
          Effect.provideService(SqlClient.SqlClient, sql)
        )
      )
    })
  )
  return dropAfter.pipe(
    Layer.provideMerge(makeSyncLayer({ progress: ProgressSilent, ...(options.budget ? { budget: options.budget } : {}) })),
    // the program's tracing as main.ts sets it up (off without an OTLP endpoint)
    Layer.provideMerge(TracingLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
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

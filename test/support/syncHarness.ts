import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { makeSyncLayer } from "../../src/cli/app.js"
import { ProgressLog } from "../../src/run/Progress.js"
import { type Env, withEnv } from "./config.js"
import { TestEnv, TestSettings } from "./connector.js"
import { type TestDatabase, TestDatabaseEnv, testDatabaseAt } from "./database.js"
import { EmulatorTest, type EmulatorTestOptions, type TestEmulator } from "./emulator.js"

/** The base URL the connector uses instead of the emulator's own (a proxy in front of it). */
export class ServiceUrl extends Context.Tag("test/sync/ServiceUrl")<ServiceUrl, string>() {}

export interface HarnessOptions {
  /** Settings besides the connector's for the emulator and the test database's, e.g. SYNC_FULL_PASS_EVERY. */
  readonly env?: Env
  /** Where the connector reaches the service (default: the emulator itself), e.g. a proxy in front of it. */
  readonly serviceUrl?: Layer.Layer<ServiceUrl, never, TestEmulator>
  /** The test database (default: a fresh schema of the test database). */
  readonly database?: Layer.Layer<TestDatabase>
}

/**
 * The application as the program assembles it (cli/app.ts: sync engine, auth services, database), configured through
 * its real Config path for a fresh test emulator and a fresh database schema: the real AccessTokens, Connections,
 * ServiceClient over Node's HTTP client, real Postgres. Progress as log lines; only warnings are printed.
 */
export const syncHarness = (emulator: EmulatorTestOptions, options: HarnessOptions = {}) => {
  const app = Layer.unwrapEffect(
    Effect.gen(function* () {
      const url = yield* Effect.serviceOption(ServiceUrl)
      const env = yield* TestEnv({ ...options.env, ...(url._tag === "Some" ? { SERVICE_BASE_URL: url.value } : {}) })
      return makeSyncLayer({ progress: ProgressLog }).pipe(Layer.provide(withEnv(env)), Layer.provideMerge(Layer.succeed(TestSettings, env)))
    })
  ).pipe(Layer.provide(options.serviceUrl ?? Layer.empty))
  return app.pipe(
    Layer.provideMerge(EmulatorTest(emulator)),
    Layer.provideMerge(options.database ?? TestDatabaseEnv),
    Layer.provideMerge(Logger.minimumLogLevel(LogLevel.Warning))
  )
}

/**
 * A fresh schema of TEST_DATABASE_URL whose connections carry their own `application_name`, so a test can find (and
 * terminate) exactly its connector's sessions among everyone else's on the database.
 */
export const namedTestDatabase = (applicationName: (schema: string) => string) => {
  return testDatabaseAt((schema) => ({ DATABASE_APPLICATION_NAME: applicationName(schema) }))
}

/**
 * The pages a pass reads over an unchanging list of `rows` at page size `first`: each page after the first starts one
 * row before where the last ended (it joins on a row already landed), and the page whose positions reach the end of
 * the list is the last (the service says `hasNextPage: false`).
 */
export const pagesToRead = (rows: number, first: number): number => {
  let position = 0
  for (let pages = 1; ; pages++) {
    position = Math.max(0, position - 1) + first
    if (position >= rows) return pages
  }
}

/** Rows landed after `pages` full pages of `first` (the first page lands `first`, each later one `first - 1` new). */
export const rowsAfterPages = (pages: number, first: number): number => (pages === 0 ? 0 : first + (pages - 1) * (first - 1))

import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { makeSyncLayer } from "../../src/cli/app.js"
import type { JobRecord } from "../../src/emulator/EmulatorAdmin.js"
import { ProgressLog } from "../../src/sync/Progress.js"
import { sanitizeJson, sanitizeText } from "../../src/sync/landing/sanitize.js"
import { jobScalarsStream } from "../../src/sync/streams/index.js"
import { type Env, withEnv } from "./config.js"
import { TestEnv, TestSettings } from "./connector.js"
import { type TestDatabase, TestDatabaseEnv, testDatabaseAt } from "./database.js"
import { EmulatorTest, type EmulatorTestOptions, TestEmulator } from "./emulator.js"

const jobsStream = jobScalarsStream

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

const timestampColumns = new Set(jobsStream.columns.filter((c) => c.type === "timestamptz").map((c) => c.column))

/** What a live job of the service must look like in `jobs`: every mapped column and `raw`. */
const expectedRow = (job: JobRecord) => {
  const row: Record<string, unknown> = { id: job.id }
  for (const c of jobsStream.columns) {
    const v = job[c.path[0]!]
    row[c.column] =
      v === null || v === undefined ? null : timestampColumns.has(c.column) ? Date.parse(v as string) : typeof v === "string" ? sanitizeText(v) : v
  }
  row.raw = sanitizeJson(job)
  return row
}

const byId = (a: { readonly [k: string]: unknown }, b: { readonly [k: string]: unknown }) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0)

/** The warehouse's live rows of the account are exactly the service's jobs: same ids, every column and raw equal. */
export const expectWarehouseExact = (accountId: string) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const sql = yield* SqlClient.SqlClient
    const service = [...(yield* admin.listJobs({ accountId }))].sort(byId)
    const rows = yield* sql<Record<string, unknown>>`SELECT * FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL`
    const stored = [...rows]
      .map((r) => {
        const out: Record<string, unknown> = { id: r.id }
        for (const c of jobsStream.columns) {
          const v = r[c.column]
          out[c.column] = v instanceof Date ? v.getTime() : v
        }
        out.raw = r.raw
        return out
      })
      .sort(byId)
    expect(stored.length).toBe(service.length)
    const expected = service.map(expectedRow)
    // compare in slices so a mismatch names the job instead of dumping thousands of rows
    for (let i = 0; i < expected.length; i++) {
      if (JSON.stringify(stored[i]) !== JSON.stringify(expected[i])) expect(stored[i]).toEqual(expected[i])
    }
    const duplicates = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (SELECT id FROM jobs WHERE account_id = ${accountId} GROUP BY id HAVING count(*) > 1) d`
    expect(duplicates[0]!.n).toBe(0)
    return service.length
  })

/**
 * The pages a pass reads over an unchanging list of `rows` at page size `first`: each page after the first starts one
 * row before where the last ended (it joins on a row already landed), and a page shorter than `first` is the last.
 */
export const pagesToRead = (rows: number, first: number): number => {
  let position = 0
  for (let pages = 1; ; pages++) {
    const offset = Math.max(0, position - 1)
    const got = Math.max(0, Math.min(first, rows - offset))
    position = offset + got
    if (got < first) return pages
  }
}

/** Rows landed after `pages` full pages of `first` (the first page lands `first`, each later one `first - 1` new). */
export const rowsAfterPages = (pages: number, first: number): number => (pages === 0 ? 0 : first + (pages - 1) * (first - 1))

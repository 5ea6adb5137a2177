import { PgClient } from "@effect/sql-pg"
import { type SqlClient, SqlError } from "@effect/sql"
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import * as path from "node:path"
import { DatabaseConfig } from "../config.js"
import type { DataDirInUse } from "./dataDirLock.js"
import { type EmbeddedPostgresError, startEmbeddedPostgres } from "./EmbeddedPostgres.js"
import { runMigrations } from "./Migrations.js"
import { makePreparedStatements, PreparedStatements } from "./preparedStatements.js"

/** What kind of database the connections lead to, as the database itself says. */
export interface DatabaseTopologyShape {
  /**
   * Every connection is one session: the embedded Postgres (PGlite), whether started here or reached through a URL.
   * There, statements of two connections must not overlap (they can take each other's prepared statement or portal),
   * advisory locks exclude nothing between processes and named statements are shared.
   */
  readonly singleSession: boolean
}

export class DatabaseTopology extends Context.Tag("account-sync/DatabaseTopology")<DatabaseTopology, DatabaseTopologyShape>() {}

export interface DatabaseTarget {
  /** A real Postgres; when absent the embedded one is started under `dataDir`. */
  readonly url: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string | "memory"
  readonly schema: string
  readonly maxConnections?: number
  readonly applicationName?: string
  /** Named statements for the texts registered with PreparedStatements.keep (default true; never on a single session). */
  readonly prepareStatements?: boolean
}

/** The connection string's own `options` (or the role's settings) replaced the search_path we start with. */
class SchemaNotFirst extends Data.TaggedError("SchemaNotFirst")<{ readonly schema: string; readonly current: string | null }> {
  override get message() {
    return (
      `the database connection's search_path puts ${this.current === null ? "no schema" : `schema "${this.current}"`} first, not DB_SCHEMA "${this.schema}" ` +
      "(does DATABASE_URL set options=-c search_path=...? remove it; account-sync sets the search_path itself)"
    )
  }
}

const openPool = (
  connection: pg.PoolConfig,
  schema: string,
  maxConnections: number,
  applicationName: string,
  onConnect: (client: pg.PoolClient) => void
) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new pg.Pool({
          ...connection,
          max: maxConnections,
          application_name: applicationName,
          connectionTimeoutMillis: 10_000,
          idleTimeoutMillis: 30_000,
          // every connection of the pool sees our schema and only it (real Postgres honours startup options):
          // with `public` behind it, a `public.schema_migrations` of another tool would pass for ours.
          // No JIT: a page statement of a stream with line items and custom fields is estimated costly enough (row
          // counts of jsonb_array_elements guessed at 100 a parent) that Postgres compiled it for every page, 1-3 s
          // of LLVM per page of jobs for a statement that runs in tens of milliseconds.
          // Custom plans always: a backfill grows a table from nothing to millions of rows within one session, and a
          // generic plan made while it was small (its statistics as they were, or none where autovacuum has not run)
          // looks every page's stored rows up by reading the whole account, so the backfill goes quadratic (0.3 s a
          // page at 200,000 jobs); planning each page costs less. Figures: docs/performance.md, "Postgres settings".
          options: `-c search_path=${schema} -c jit=off -c plan_cache_mode=force_custom_plan`
        })
        pool.on("error", () => {})
        pool.on("connect", onConnect)
        return pool
      },
      catch: (cause) => new SqlError.SqlError({ cause, message: "cannot connect to Postgres" })
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption("2 seconds"))
  )

/**
 * Creates the schema when it is missing, checks it comes first on the search_path, and asks the server what it is.
 * An existing schema is not created again: a role that owns only DB_SCHEMA may not create schemas in the database
 * (and Postgres checks that privilege before IF NOT EXISTS).
 */
const inspect = (pool: pg.Pool, schema: string) =>
  Effect.tryPromise({
    try: async () => {
      const existing = await pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])
      if (existing.rowCount === 0) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      const { rows } = await pool.query<{ schema: string | null; version: string }>("SELECT current_schema() AS schema, version() AS version")
      return { current: rows[0]?.schema ?? null, singleSession: /PGlite/i.test(rows[0]?.version ?? "") }
    },
    catch: (cause) => new SqlError.SqlError({ cause, message: "cannot connect to Postgres" })
  }).pipe(
    Effect.filterOrFail(
      (found) => found.current === schema,
      (found) => new SqlError.SqlError({ cause: undefined, message: new SchemaNotFirst({ schema, current: found.current }).message })
    )
  )

/**
 * An `@effect/sql-pg` client for a real or an embedded Postgres (one code path either way), with what the database
 * is (DatabaseTopology) and the registry of statements kept prepared on each connection (PreparedStatements).
 */
export const makeDatabaseLayer = (
  target: DatabaseTarget
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabaseTopology | PreparedStatements, SqlError.SqlError | EmbeddedPostgresError | DataDirInUse> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const maxConnections = target.maxConnections ?? 10
      const applicationName = target.applicationName ?? "account-sync"
      let connection: pg.PoolConfig
      if (Option.isSome(target.url)) {
        connection = { connectionString: Redacted.value(target.url.value) }
      } else {
        const dataDir = target.dataDir === "memory" ? "memory" : path.resolve(target.dataDir, "pg")
        const embedded = yield* startEmbeddedPostgres({ dataDir, searchPath: target.schema })
        yield* Effect.logDebug(`embedded Postgres on the socket in ${embedded.host}, data in ${embedded.dataDir}`)
        connection = { host: embedded.host, port: embedded.port, user: "postgres", database: "postgres" }
      }
      const prepared = makePreparedStatements()
      const pool = yield* openPool(connection, target.schema, maxConnections, applicationName, prepared.attach)
      const { singleSession } = yield* inspect(pool, target.schema)
      prepared.enabled = !singleSession && (target.prepareStatements ?? true)
      return Layer.mergeAll(
        PgClient.layerFromPool({ acquire: Effect.succeed(pool) }),
        Layer.succeed(DatabaseTopology, { singleSession }),
        Layer.succeed(PreparedStatements, prepared)
      )
    })
  )

/** The database named by the environment (`DATABASE_URL`, `DATA_DIR`, `DB_SCHEMA`, `DATABASE_*`). */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(DatabaseConfig, (config) =>
    makeDatabaseLayer({
      url: config.url,
      dataDir: config.dataDir,
      schema: config.schema,
      maxConnections: config.poolSize,
      applicationName: config.applicationName,
      prepareStatements: config.prepareStatements
    })
  )
)

/** The database with every migration applied: what every command that touches the schema uses. */
export const MigratedDatabaseLive = Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(DatabaseLive))

import { PgClient } from "@effect/sql-pg"
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import * as path from "node:path"
import { DatabaseConfig } from "../config.js"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.js"
import { runMigrations } from "./Migrations.js"
import { prepareRegisteredStatements } from "./preparedStatements.js"

export interface DatabaseTarget {
  /** A real Postgres; when absent the embedded one is started under `dataDir`. */
  readonly url: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string | "memory"
  readonly schema: string
  readonly maxConnections?: number
  readonly applicationName?: string
  /**
   * Named statements for the texts registered with keepPrepared (default: true for a `url`). False when the url
   * leads to an embedded Postgres (its connections share one session) or to a pooler that does not keep them.
   */
  readonly prepareStatements?: boolean
}

/** The connection string's own `options` (or the role's settings) replaced the search_path we start with. */
class SchemaNotFirst extends Error {
  constructor(schema: string, current: string | null) {
    super(
      `the database connection's search_path puts ${current === null ? "no schema" : `schema "${current}"`} first, not DB_SCHEMA "${schema}" ` +
        "(does DATABASE_URL set options=-c search_path=...? remove it; account-sync sets the search_path itself)"
    )
  }
}

const poolLayer = (options: {
  readonly connection: pg.PoolConfig
  readonly schema: string
  readonly maxConnections: number
  readonly applicationName: string
  /** Named (prepared) statements for the texts registered with keepPrepared; false on the embedded Postgres. */
  readonly prepare: boolean
}) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const pool = new pg.Pool({
            ...options.connection,
            max: options.maxConnections,
            application_name: options.applicationName,
            connectionTimeoutMillis: 10_000,
            idleTimeoutMillis: 30_000,
            // every connection of the pool sees our schema and only it (real Postgres honours startup options):
            // with `public` behind it, a `public.schema_migrations` of another tool would pass for ours
            options: `-c search_path=${options.schema}`
          })
          pool.on("error", () => {})
          if (options.prepare) pool.on("connect", prepareRegisteredStatements)
          await pool.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`)
          const { rows } = await pool.query<{ schema: string | null }>("SELECT current_schema() AS schema")
          if (rows[0]?.schema !== options.schema) {
            await pool.end()
            throw new SchemaNotFirst(options.schema, rows[0]?.schema ?? null)
          }
          return pool
        },
        catch: (cause) =>
          new SqlError.SqlError({
            cause,
            message: cause instanceof SchemaNotFirst ? cause.message : "cannot connect to Postgres"
          })
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption("2 seconds"))
    )
  })

/** An `@effect/sql-pg` client for a real or an embedded Postgres: one code path either way. */
export const makeDatabaseLayer = (target: DatabaseTarget) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const maxConnections = target.maxConnections ?? 10
      const applicationName = target.applicationName ?? "account-sync"
      if (Option.isSome(target.url)) {
        return poolLayer({
          connection: { connectionString: Redacted.value(target.url.value) },
          schema: target.schema,
          maxConnections,
          applicationName,
          prepare: target.prepareStatements ?? true
        })
      }
      const dataDir = target.dataDir === "memory" ? "memory" : path.resolve(target.dataDir, "pg")
      const embedded = yield* startEmbeddedPostgres({ dataDir, searchPath: target.schema })
      yield* Effect.logDebug(`embedded Postgres on 127.0.0.1:${embedded.port}, data in ${embedded.dataDir}`)
      return poolLayer({
        connection: { host: embedded.host, port: embedded.port, user: "postgres", database: "postgres" },
        schema: target.schema,
        maxConnections,
        applicationName,
        prepare: false
      })
    })
  )

/** The database named by the environment (`DATABASE_URL`, `DATA_DIR`, `DB_SCHEMA`). */
export const DatabaseLive = Layer.unwrapEffect(Effect.map(DatabaseConfig, makeDatabaseLayer))

/** The database with every migration applied: what every command that touches the schema uses. */
export const MigratedDatabaseLive = Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(DatabaseLive))

export type Database = PgClient.PgClient | SqlClient.SqlClient

import { SqlError } from "@effect/sql"
import { Data, Effect, Option, Redacted, type Scope } from "effect"
import * as path from "node:path"
import pg from "pg"
import type { QueryDatabaseConfig } from "../config.js"
import { type EmbeddedPostgresError, startEmbeddedPostgres } from "./EmbeddedPostgres.js"
import { QueryRefused } from "./readOnlyStatement.js"

/** The session could not be made read-only from its start. */
export class ReadOnlySessionError extends Data.TaggedError("ReadOnlySessionError")<{ readonly message: string }> {}

export interface ReadOnlySession {
  /** Which connection string it uses (never its value), or `embedded`. */
  readonly source: "QUERY_DATABASE_URL" | "DATABASE_URL" | "embedded"
  /** The embedded Postgres (PGlite): one session that the connections share. */
  readonly singleSession: boolean
  /**
   * One statement as a parameterless prepared statement (the extended protocol: a second statement is a syntax
   * error), in a read-only transaction that is always rolled back.
   */
  readonly run: (statement: string) => Effect.Effect<pg.QueryResult<Record<string, unknown>>, SqlError.SqlError | QueryRefused>
}

/** Postgres' answers that mean the statement was refused, not that something failed. */
const refusedBy = (cause: unknown): QueryRefused | undefined => {
  const error = cause as { code?: string; message?: string }
  if (error?.code === "42601" && /multiple commands/.test(error.message ?? "")) return new QueryRefused({ reason: "more than one statement" })
  if (error?.code === "25006") return new QueryRefused({ reason: `the database says: ${error.message}` })
  return undefined
}

const connectionOf = (config: QueryDatabaseConfig) =>
  Effect.gen(function* () {
    const { database } = config
    if (Option.isSome(config.queryUrl)) return { source: "QUERY_DATABASE_URL" as const, connection: { connectionString: Redacted.value(config.queryUrl.value) } }
    if (Option.isSome(database.url)) return { source: "DATABASE_URL" as const, connection: { connectionString: Redacted.value(database.url.value) } }
    const dataDir = database.dataDir === "memory" ? "memory" : path.resolve(database.dataDir, "pg")
    const embedded = yield* startEmbeddedPostgres({ dataDir, searchPath: database.schema, readOnly: true, maxConnections: 2 })
    return { source: "embedded" as const, connection: { host: embedded.host, port: embedded.port, user: "postgres", database: "postgres" } }
  })

/**
 * One connection for `query`, read-only from its start: a real Postgres gets `default_transaction_read_only=on` as a
 * startup option (checked once connected: a URL whose own `options` drop it is refused); the embedded database this
 * process opens is read-only before its socket opens. No migration runs, nothing is created.
 * An embedded database reached through a URL is another process's one session: it is left as it is, and only the
 * statement's own transaction is read-only.
 */
export const openReadOnlySession = (
  config: QueryDatabaseConfig
): Effect.Effect<ReadOnlySession, SqlError.SqlError | EmbeddedPostgresError | ReadOnlySessionError, Scope.Scope> =>
  Effect.gen(function* () {
    const { connection, source } = yield* connectionOf(config)
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client({
            ...connection,
            application_name: `${config.database.applicationName} query`,
            connectionTimeoutMillis: 10_000,
            options: `-c search_path=${config.database.schema} -c default_transaction_read_only=on`
          })
          client.on("error", () => {})
          await client.connect()
          return client
        },
        catch: (cause) => new SqlError.SqlError({ cause, message: `cannot connect to Postgres (${source})` })
      }),
      (client) => Effect.promise(() => client.end()).pipe(Effect.timeoutOption("2 seconds"))
    )
    const { rows } = yield* Effect.tryPromise({
      try: () => client.query<{ read_only: string; version: string }>("SELECT current_setting('default_transaction_read_only') AS read_only, version() AS version"),
      catch: (cause) => new SqlError.SqlError({ cause, message: `cannot connect to Postgres (${source})` })
    })
    const singleSession = /PGlite/i.test(rows[0]?.version ?? "")
    if (!singleSession && rows[0]?.read_only !== "on") {
      return yield* new ReadOnlySessionError({
        message: `query: the session is not read-only: ${source}'s own options replace the default_transaction_read_only=on query starts with (remove options=... from ${source})`
      })
    }
    const run = (statement: string) =>
      Effect.tryPromise({
        try: async () => {
          await client.query("BEGIN TRANSACTION READ ONLY")
          try {
            // queryMode "extended": Parse/Bind/Execute even without parameters (pg's types do not list the option)
            return await client.query<Record<string, unknown>>({ text: statement, queryMode: "extended" } as pg.QueryConfig)
          } finally {
            await client.query("ROLLBACK").catch(() => {})
          }
        },
        catch: (cause) => refusedBy(cause) ?? new SqlError.SqlError({ cause, message: "the query failed" })
      })
    return { source, singleSession, run }
  })

import { SqlError } from "@effect/sql"
import { Data, Duration, Effect, Option, Redacted, type Scope } from "effect"
import * as path from "node:path"
import pg from "pg"
import type { QueryDatabaseConfig } from "../config.js"
import type { DataDirInUse } from "./dataDirLock.js"
import { type EmbeddedPostgresError, startEmbeddedPostgres } from "./EmbeddedPostgres.js"
import { queryRoleOf } from "./queryRole.js"
import { type ReachedVolatile, reachedVolatileQuery, refusalOfReached } from "./readOnlyCalls.js"
import { type CheckedStatement, QueryRefused } from "./readOnlyStatement.js"

/** The session could not be made read-only from its start. */
export class ReadOnlySessionError extends Data.TaggedError("ReadOnlySessionError")<{ readonly message: string }> {}

/** The statement ran longer than QUERY_TIMEOUT: Postgres cancelled it. */
export class QueryTimedOut extends Data.TaggedError("QueryTimedOut")<{ readonly timeout: Duration.Duration }> {
  override get message() {
    return `query: the statement ran longer than QUERY_TIMEOUT (${Duration.toMillis(this.timeout) / 1000} s), and Postgres cancelled it; set QUERY_TIMEOUT (e.g. QUERY_TIMEOUT="10 minutes") to give it longer`
  }
}

export interface ReadOnlySession {
  /** Which connection string it uses (never its value), or `embedded`. */
  readonly source: "QUERY_DATABASE_URL" | "DATABASE_URL" | "embedded"
  /** The role the statements run as (`current_user`). */
  readonly role: string
  /** The embedded Postgres (PGlite): one session that the connections share. */
  readonly singleSession: boolean
  /**
   * One statement as a parameterless prepared statement (the extended protocol: a second statement is a syntax
   * error), in a read-only transaction that is always rolled back; refused first when its names reach a function
   * that may change something (readOnlyCalls.ts asks this database's catalog).
   */
  readonly run: (statement: CheckedStatement) => Effect.Effect<pg.QueryResult<Record<string, unknown>>, SqlError.SqlError | QueryRefused | QueryTimedOut>
}

/** Postgres' answers that mean the statement was refused or ran out of time, not that something failed. */
const refusedBy = (cause: unknown, timeout: Duration.Duration): QueryRefused | QueryTimedOut | undefined => {
  if (cause instanceof QueryRefused) return cause
  const error = cause as { code?: string; message?: string }
  if (error?.code === "42601" && /multiple commands/.test(error.message ?? "")) return new QueryRefused({ reason: "more than one statement" })
  if (error?.code === "25006") return new QueryRefused({ reason: `the database says: ${error.message}` })
  if (error?.code === "57014" && /statement timeout/.test(error.message ?? "")) return new QueryTimedOut({ timeout })
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
 * One connection for `query`, read-only from its start: a real Postgres gets `default_transaction_read_only=on`, and
 * QUERY_TIMEOUT as `statement_timeout` and `idle_in_transaction_session_timeout`, as startup options (checked once
 * connected: a URL whose own `options` drop them is refused); the embedded database this process opens is read-only
 * before its socket opens. No migration runs, nothing is created.
 * An embedded database reached through a URL is another process's one session: it is left as it is, and only the
 * statement's own transaction is read-only. The embedded database (PGlite, one process, one session) has no
 * statement timeout: it cannot cancel a statement while it runs one.
 */
export const openReadOnlySession = (
  config: QueryDatabaseConfig
): Effect.Effect<ReadOnlySession, SqlError.SqlError | EmbeddedPostgresError | DataDirInUse | ReadOnlySessionError, Scope.Scope> =>
  Effect.gen(function* () {
    const { connection, source } = yield* connectionOf(config)
    const timeoutMs = Math.ceil(Duration.toMillis(config.timeout))
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client({
            ...connection,
            application_name: `${config.database.applicationName} query`,
            connectionTimeoutMillis: 10_000,
            // the parser that judged the statement reads strings with standard_conforming_strings on: so must the server
            options: `-c search_path=${config.database.schema} -c default_transaction_read_only=on -c standard_conforming_strings=on -c statement_timeout=${timeoutMs} -c idle_in_transaction_session_timeout=${timeoutMs}`
          })
          client.on("error", () => {})
          await client.connect()
          return client
        },
        catch: (cause) => new SqlError.SqlError({ cause, message: `cannot connect to Postgres (${source})` })
      }),
      (client) => Effect.promise(() => client.end()).pipe(Effect.timeoutOption("2 seconds"))
    )
    const ask = <A extends pg.QueryResultRow>(text: string, values: ReadonlyArray<unknown> = []) =>
      Effect.tryPromise({
        try: () => client.query<A>(text, [...values]),
        catch: (cause) => new SqlError.SqlError({ cause, message: `cannot connect to Postgres (${source})` })
      })
    const { rows } = yield* ask<{ read_only: string; strings: string; version: string; timeouts: string }>(
      `SELECT current_setting('default_transaction_read_only') AS read_only, current_setting('standard_conforming_strings') AS strings, version() AS version,
              (SELECT string_agg(setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('idle_in_transaction_session_timeout', 'statement_timeout')) AS timeouts`
    )
    const singleSession = /PGlite/i.test(rows[0]?.version ?? "")
    if (!singleSession && rows[0]?.read_only !== "on") {
      return yield* new ReadOnlySessionError({
        message: `query: the session is not read-only: ${source}'s own options replace the default_transaction_read_only=on query starts with (remove options=... from ${source})`
      })
    }
    if (!singleSession && rows[0]?.strings !== "on") {
      return yield* new ReadOnlySessionError({
        message: `query: standard_conforming_strings is off in ${source}'s session (its options replace the one query starts with): remove options=... from ${source}`
      })
    }
    if (!singleSession && rows[0]?.timeouts !== `${timeoutMs} ${timeoutMs}`) {
      return yield* new ReadOnlySessionError({
        message: `query: the session's statement_timeout is not QUERY_TIMEOUT's (${source}'s own options replace the one query starts with): remove options=... from ${source}`
      })
    }
    // on DATABASE_URL, the statement runs as the schema's query role, not as the app role that owns the tables
    if (source === "DATABASE_URL" && !singleSession) {
      const queryRole = queryRoleOf(config.database.schema)
      const { rows: usable } = yield* ask<{ usable: boolean }>(
        "SELECT pg_has_role(session_user, oid, 'MEMBER') AS usable FROM pg_roles WHERE rolname = $1",
        [queryRole]
      )
      if (usable[0]?.usable === true) {
        yield* ask(`SET ROLE "${queryRole}"`)
      } else {
        yield* Effect.logWarning(
          `query runs as DATABASE_URL's own role: there is no role ${queryRole} it may switch to (config/postgres/roles.sql creates it); set QUERY_DATABASE_URL to a reader role`
        )
      }
    }
    const { rows: who } = yield* ask<{ role: string }>("SELECT current_user AS role")
    const role = who[0]?.role ?? ""
    const run = (statement: CheckedStatement) =>
      Effect.tryPromise({
        try: async () => {
          await client.query("BEGIN TRANSACTION READ ONLY")
          try {
            const reached = await client.query<ReachedVolatile>(reachedVolatileQuery(statement.names))
            const refused = refusalOfReached(reached.rows)
            if (refused !== undefined) throw refused
            // queryMode "extended": Parse/Bind/Execute even without parameters (pg's types do not list the option)
            return await client.query<Record<string, unknown>>({ text: statement.text, queryMode: "extended" } as pg.QueryConfig)
          } finally {
            await client.query("ROLLBACK").catch(() => {})
          }
        },
        catch: (cause) => refusedBy(cause, config.timeout) ?? new SqlError.SqlError({ cause, message: "the query failed" })
      })
    return { source, role, singleSession, run }
  })

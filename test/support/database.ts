import { type SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"
import { DatabaseLayer } from "../../src/cli/app.js"
import type { DatabaseTopology } from "../../src/db/Database.js"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.js"
import type { PreparedStatements } from "../../src/db/preparedStatements.js"
import { queryRoleOf } from "../../src/db/queryRole.js"
import { type Env, withEnv } from "./config.js"

/** Where a test file's own fresh schema lives, and the settings (DATABASE_URL, DB_SCHEMA, ...) that reach it. */
export class TestDatabase extends Context.Tag("test/TestDatabase")<TestDatabase, { readonly url: string; readonly schema: string; readonly env: Env }>() {}

/**
 * No real Postgres for this run (see globalSetup.ts): each file has an embedded one, whose connections share one
 * session. What needs sessions of its own (row and advisory locks between processes, terminating a backend,
 * statements overlapping on two connections) cannot be shown there.
 */
export const embeddedTestDatabase = (): boolean => process.env.TEST_DATABASE_URL === undefined

/** `use` with a connection of its own to `url` (a role's login), closed afterwards. */
export const withPgClient = <A>(url: string, use: (client: pg.Client) => Promise<A>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
    client.on("error", () => {})
    await client.connect()
    try {
      return await use(client)
    } finally {
      await client.end()
    }
  })

/** Runs `statements` one by one as TEST_DATABASE_URL's login (the superuser), ignoring failures: for set-up and clean-up of roles. */
export const asSuperuser = (statements: ReadonlyArray<string>) =>
  withPgClient(process.env.TEST_DATABASE_URL!, async (client) => {
    for (const statement of statements) await client.query(statement).catch(() => {})
  })

/** "ok", or the SQLSTATE Postgres answered `statement` with as `url`'s login (after `SET ROLE role` when given). */
export const sqlOutcome = (url: string, statement: string, role?: string) =>
  withPgClient(url, async (client) => {
    if (role !== undefined) await client.query(`SET ROLE "${role}"`)
    return client.query(statement).then(
      () => "ok",
      (error: unknown) => (error as { code?: string }).code ?? String(error)
    )
  })

/** The test database's address, logging in as `role` with `password`. */
export const testDatabaseUrlAs = (role: string, password: string): string => {
  const url = new URL(process.env.TEST_DATABASE_URL!)
  url.username = role
  url.password = password
  return url.toString()
}

export const freshSchemaName = () => `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`

/** Drops a test's schema, its job queue's beside it and its query role. */
export const dropSchema = (url: string, schema: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
    await client.connect()
    try {
      // and the job queue's (pg-boss) schema beside it, when a test made one
      await client.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_queue CASCADE`)
      // the role sql/012_query_role.sql made for the schema (roles are the cluster's)
      await client.query(`DROP ROLE IF EXISTS "${queryRoleOf(schema)}"`).catch(() => {})
    } finally {
      await client.end()
    }
  }).pipe(Effect.ignore)

/**
 * A fresh schema on TEST_DATABASE_URL (dropped at the end), or an in-memory embedded Postgres behind a socket when
 * that is unset, so the suite also passes on a machine without Postgres. Only its address: the program's own layers
 * connect to it through their configuration (`env`), as they would in production. `env` adds to the settings.
 */
export const testDatabaseAt = (extra: Env | ((schema: string) => Env) = {}): Layer.Layer<TestDatabase> =>
  Layer.scoped(
    TestDatabase,
    Effect.gen(function* () {
      const schema = freshSchemaName()
      const configured = process.env.TEST_DATABASE_URL
      const url =
        configured ??
        (yield* Effect.orDie(
          Effect.map(startEmbeddedPostgres({ dataDir: "memory", searchPath: schema }), (embedded) => embedded.url)
        ))
      if (configured) yield* Effect.addFinalizer(() => dropSchema(url, schema))
      return { url, schema, env: { DATABASE_URL: url, DB_SCHEMA: schema, DATABASE_POOL_SIZE: "12", ...(typeof extra === "function" ? extra(schema) : extra) } }
    })
  )

export const TestDatabaseEnv = testDatabaseAt()

/** The program's database layer (migrated) over the test file's fresh schema, with its address. */
export const TestDatabaseLive: Layer.Layer<TestDatabase | PgClient.PgClient | SqlClient.SqlClient | DatabaseTopology | PreparedStatements, unknown> =
  Layer.unwrapEffect(Effect.map(TestDatabase, (db) => DatabaseLayer.pipe(Layer.provide(withEnv(db.env))))).pipe(Layer.provideMerge(TestDatabaseEnv))

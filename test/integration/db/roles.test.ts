import { expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { runQuery } from "../../../src/cli/query.js"
import { makeDatabaseLayer } from "../../../src/db/Database.js"
import { runMigrations } from "../../../src/db/Migrations.js"
import { asSuperuser, embeddedTestDatabase, freshSchemaName, sqlOutcome, testDatabaseUrlAs } from "../../support/database.js"

const root = path.resolve(import.meta.dirname, "../../..")
const psqlAvailable = spawnSync("psql", ["--version"]).status === 0

// Roles are the cluster's, not a schema's: each run makes its own names and drops them
it.scoped.skipIf(embeddedTestDatabase() || !psqlAvailable)(
  "config/postgres/init-roles.sh (as docker-compose runs it): the app role owns only DB_SCHEMA and migrates and writes there; the reader role reads, for query",
  () =>
    Effect.gen(function* () {
      const schema = freshSchemaName()
      const app = `${schema}_app`
      const reader = `${schema}_reader`
      yield* Effect.addFinalizer(() =>
        asSuperuser([`DROP SCHEMA IF EXISTS ${schema} CASCADE`, `DROP OWNED BY ${reader}`, `DROP OWNED BY ${app}`, `DROP ROLE IF EXISTS ${reader}`, `DROP ROLE IF EXISTS ${app}`, `DROP ROLE IF EXISTS ${schema}_query`])
      )
      const server = new URL(process.env.TEST_DATABASE_URL!)
      const init = spawnSync("sh", [path.join(root, "config/postgres/init-roles.sh")], {
        encoding: "utf8",
        env: {
          PATH: process.env.PATH,
          PGHOST: server.hostname,
          PGPORT: server.port || "5432",
          POSTGRES_USER: decodeURIComponent(server.username),
          POSTGRES_DB: server.pathname.slice(1),
          DB_SCHEMA: schema,
          ACCOUNT_SYNC_DB_USER: app,
          ACCOUNT_SYNC_DB_PASSWORD: "app password's",
          ACCOUNT_SYNC_READER_USER: reader,
          ACCOUNT_SYNC_READER_PASSWORD: "reader-password",
          ACCOUNT_SYNC_ROLES_SQL: path.join(root, "config/postgres/roles.sql")
        }
      })
      expect(init.status, init.stderr).toBe(0)
      const appUrl = testDatabaseUrlAs(app, "app password's")
      const readerUrl = testDatabaseUrlAs(reader, "reader-password")

      // the app role: migrations and writes in its schema; no superuser, no other schema, no server files
      const database = makeDatabaseLayer({ url: Option.some(Redacted.make(appUrl)), dataDir: "memory", schema, maxConnections: 2 })
      yield* Effect.gen(function* () {
        yield* runMigrations
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO jobs (account_id, id, raw) VALUES ('acct-1', 'job-1', '{}')`
        expect(yield* sql`SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user`).toEqual([
          { rolsuper: false, rolcreatedb: false, rolcreaterole: false }
        ])
      }).pipe(Effect.provide(Layer.fresh(database)))
      expect(yield* sqlOutcome(appUrl, `CREATE SCHEMA ${schema}_other`)).toBe("42501")
      expect(yield* sqlOutcome(appUrl, "CREATE TABLE public.stray (x int)")).toBe("42501")
      expect(yield* sqlOutcome(appUrl, "SELECT pg_read_file('/etc/hostname')")).toBe("42501")

      // the reader role: query reads the tables the migrations made; the role itself cannot write even outside query
      const query = (statement: string) =>
        runQuery(statement).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", appUrl], ["QUERY_DATABASE_URL", readerUrl], ["DB_SCHEMA", schema]])))
        )
      expect(yield* query("SELECT current_user AS who, count(*)::int AS jobs FROM jobs")).toEqual([{ who: reader, jobs: 1 }])
      // refused by query's parser, and by the role behind it
      expect((yield* Effect.flip(query("SELECT pg_read_file('/etc/hostname')")))._tag).toBe("QueryRefused")
      expect(yield* sqlOutcome(readerUrl, "SELECT pg_read_file('/etc/hostname')")).toBe("42501")
      // without QUERY_DATABASE_URL, query logs in as the app role and switches to the schema's query role (roles.sql made it)
      const appQuery = (statement: string) =>
        runQuery(statement).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", appUrl], ["DB_SCHEMA", schema]]))))
      expect(yield* appQuery("SELECT current_user AS who, session_user AS login, count(*)::int AS jobs FROM jobs")).toEqual([
        { who: `${schema}_query`, login: app, jobs: 1 }
      ])
      expect(yield* sqlOutcome(readerUrl, `INSERT INTO ${schema}.jobs (account_id, id, raw) VALUES ('a', 'b', '{}')`)).toBe("25006")
      expect(yield* sqlOutcome(readerUrl, `BEGIN READ WRITE; DELETE FROM ${schema}.jobs`)).toBe("42501")
    }),
  120_000
)

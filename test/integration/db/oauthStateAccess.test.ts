import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeDatabaseLayer } from "../../../src/db/Database.js"
import { migrationsDirectory, runMigrationsFrom, sqlFileLoader } from "../../../src/db/Migrations.js"
import { queryRoleOf } from "../../../src/db/queryRole.js"
import { grantReader } from "../../../src/db/readerAccess.js"
import { ownerOnlyTables } from "../../../src/db/rowSecurity.js"
import { asSuperuser, embeddedTestDatabase, freshSchemaName, sqlOutcome, testDatabaseUrlAs } from "../../support/database.js"

const root = path.resolve(import.meta.dirname, "../../..")
const psqlAvailable = spawnSync("psql", ["--version"]).status === 0

/** A migration after the shipped ones that undoes the closing: it makes oauth_pending again and grants every table. */
const laterMigration = `
DROP TABLE oauth_pending;
CREATE TABLE oauth_pending (state text PRIMARY KEY, code_verifier bytea, created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL, client_address text);
DO $$ BEGIN
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I, PUBLIC', current_schema(), left(current_schema() || '_query', 63));
END $$;
`

// Roles are the cluster's: the app role, the roles.sql reader and the analyst are made for this run and dropped after
it.scoped.skipIf(embeddedTestDatabase() || !psqlAvailable)(
  "the OAuth state (oauth_tokens, oauth_pending, token_keys) is the app role's alone: roles.sql's reader, <schema>_query and a grant-reader analyst are refused it, also after a later migration grants every table",
  () =>
    Effect.gen(function* () {
      const schema = freshSchemaName()
      const [app, reader, analyst, queryRole] = [`${schema}_app`, `${schema}_reader`, `${schema}_analyst`, queryRoleOf(schema)]
      yield* Effect.addFinalizer(() =>
        asSuperuser([`DROP SCHEMA IF EXISTS ${schema}, ${schema}_queue CASCADE`, ...[analyst, reader, app, queryRole].flatMap((r) => [`DROP OWNED BY ${r}`, `DROP ROLE IF EXISTS ${r}`])])
      )
      const roles = spawnSync(
        "psql",
        [process.env.TEST_DATABASE_URL!, "-q", "-v", "ON_ERROR_STOP=1", "-v", `schema=${schema}`, "-v", `app_role=${app}`, "-v", "app_password=app-pw",
          "-v", `reader_role=${reader}`, "-v", "reader_password=reader-pw", "-f", path.join(root, "config/postgres/roles.sql")],
        { encoding: "utf8" }
      )
      expect(roles.status, roles.stderr).toBe(0)
      yield* asSuperuser([`CREATE ROLE ${analyst} LOGIN PASSWORD 'analyst-pw'`])
      const [appUrl, readerUrl, analystUrl] = [testDatabaseUrlAs(app, "app-pw"), testDatabaseUrlAs(reader, "reader-pw"), testDatabaseUrlAs(analyst, "analyst-pw")]

      // the shipped migrations, then one more of this test's, from a directory of their own
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "later-migrations-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })))
      for (const file of fs.readdirSync(migrationsDirectory)) fs.copyFileSync(path.join(migrationsDirectory, file), path.join(directory, file))

      const database = makeDatabaseLayer({ url: Option.some(Redacted.make(appUrl)), dataDir: "memory", schema, maxConnections: 2 })
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* runMigrationsFrom(directory)
        yield* sql`INSERT INTO connections (account_id, account_name, status) VALUES ('acct-1', 'One', 'active')`
        yield* sql`INSERT INTO oauth_pending (state, expires_at, client_address) VALUES ('a-state', now() + interval '1 hour', '203.0.113.9')`
        yield* grantReader(analyst, ["acct-1"])
      }).pipe(Effect.provide(Layer.fresh(database)))

      const logins = [
        { who: "roles.sql's reader", url: readerUrl },
        { who: "<schema>_query (query without QUERY_DATABASE_URL)", url: appUrl, role: queryRole },
        { who: "a grant-reader analyst", url: analystUrl }
      ]
      const everyOutcome = Effect.forEach(logins, (login) =>
        Effect.map(
          Effect.forEach(["connections", ...ownerOnlyTables], (table) => sqlOutcome(login.url, `SELECT count(*) FROM ${schema}.${table}`, login.role)),
          (codes) => `${login.who}: ${codes.join(" ")}`
        )
      )
      const closed = logins.map((l) => `${l.who}: ok ${ownerOnlyTables.map(() => "42501").join(" ")}`)
      expect(ownerOnlyTables).toEqual(["oauth_tokens", "oauth_pending", "token_keys"])
      expect(yield* everyOutcome).toEqual(closed)

      // the later migration alone opens them (a new table under the reader's default privileges, a grant of every table)
      fs.writeFileSync(path.join(directory, "900_later.sql"), laterMigration)
      yield* Migrator.make({})({ loader: sqlFileLoader(directory), table: "schema_migrations" }).pipe(Effect.provide(Layer.fresh(database)))
      expect(yield* sqlOutcome(readerUrl, `SELECT count(*) FROM ${schema}.oauth_pending`)).toBe("ok")
      expect(yield* sqlOutcome(analystUrl, `SELECT count(*) FROM ${schema}.oauth_tokens`)).toBe("ok")
      // a migration run as the program runs them closes them again
      yield* runMigrationsFrom(directory).pipe(Effect.provide(Layer.fresh(database)))
      expect(yield* everyOutcome).toEqual(closed)
      // and the app role, their owner, still reads and writes them
      expect(yield* sqlOutcome(appUrl, `DELETE FROM ${schema}.oauth_pending`)).toBe("ok")
      expect(yield* sqlOutcome(appUrl, `SELECT count(*) FROM ${schema}.oauth_tokens`)).toBe("ok")
    }),
  120_000
)

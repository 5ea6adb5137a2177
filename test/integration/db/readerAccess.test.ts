import { expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { runQuery } from "../../../src/cli/query.js"
import { secretTables, tablesWithoutAccounts } from "../../../src/db/rowSecurity.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { runCli } from "../../support/cli.js"
import { embeddedTestDatabase, freshSchemaName, testDatabaseUrlAs, withPgClient } from "../../support/database.js"

const root = path.resolve(import.meta.dirname, "../../..")
const psqlAvailable = spawnSync("psql", ["--version"]).status === 0

/** Values that satisfy the NOT NULL columns without default of the seeded tables (checks included). */
const valueFor = (table: string, column: string, type: string, account: string): string => {
  const fixed: Record<string, string> = {
    "connections.status": "'active'",
    "sync_runs.kind": "'full'",
    "sync_runs.outcome": "'succeeded'",
    "webhook_events.state": "'applied'"
  }
  const known = fixed[`${table}.${column}`]
  if (known !== undefined) return known
  if (type === "text") return `'${account}:${column}'`
  if (type === "boolean") return "false"
  if (type === "jsonb") return "'{}'"
  if (type.startsWith("timestamp")) return "now()"
  if (type === "bytea") return "'\\x00'"
  if (type === "ARRAY") return "'{}'"
  return "1"
}

// Roles are the cluster's: the app role, the roles.sql reader and the analyst are made for this run and dropped after
it.scoped.skipIf(embeddedTestDatabase() || !psqlAvailable)(
  "grant-reader: the analyst's role reads its accounts' rows and no other's, in every table, through a view, a function or query; the app role still writes everything",
  () =>
    Effect.gen(function* () {
      const admin = process.env.TEST_DATABASE_URL!
      const schema = freshSchemaName()
      const [app, reader, analyst] = [`${schema}_app`, `${schema}_reader`, `${schema}_analyst`]
      yield* Effect.addFinalizer(() =>
        withPgClient(admin, async (client) => {
          for (const statement of [
            `DROP SCHEMA IF EXISTS ${schema} CASCADE`,
            ...[analyst, reader, app, `${schema}_query`].flatMap((role) => [`DROP OWNED BY ${role}`, `DROP ROLE IF EXISTS ${role}`])
          ]) {
            await client.query(statement).catch(() => {})
          }
        })
      )
      const init = spawnSync("psql", [admin, "-v", `app_role=${app}`, "-v", "app_password=app-pw", "-v", `reader_role=${reader}`, "-v", "reader_password=reader-pw", "-v", `schema=${schema}`, "-f", path.join(root, "config/postgres/roles.sql")], { encoding: "utf8" })
      expect(init.status, init.stderr).toBe(0)
      yield* withPgClient(admin, (client) => client.query(`CREATE ROLE ${analyst} LOGIN PASSWORD 'analyst-pw'`))
      const appUrl = testDatabaseUrlAs(app, "app-pw")
      const analystUrl = testDatabaseUrlAs(analyst, "analyst-pw")
      const env = { DATABASE_URL: appUrl, DB_SCHEMA: schema, LOG_LEVEL: "warn" }
      const migrated = yield* runCli(["migrate"], env)
      expect(migrated.code, migrated.stderr).toBe(0)

      // every table with accounts' rows is under forced row-level security; the others are known to have none
      const tables = yield* withPgClient(appUrl, async (client) =>
        (
          await client.query<{ relname: string; accounts: boolean; secured: boolean; policies: Array<string> }>(
            `SELECT c.relname, EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id') AS accounts,
               c.relrowsecurity AND c.relforcerowsecurity AS secured,
               ARRAY(SELECT polname::text FROM pg_policy WHERE polrelid = c.oid ORDER BY polname) AS policies
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
            [schema]
          )
        ).rows
      )
      for (const table of tables) {
        if (table.accounts) expect([table.relname, table.secured, table.policies]).toEqual([table.relname, true, ["account_sync_owner", "account_sync_readers"]])
        else expect(tablesWithoutAccounts, `${table.relname} has no account_id and no row-level security`).toContain(table.relname)
      }
      // every stream's tables (its own, its children's, custom fields) among them: a new stream is covered without a line here
      const secured = tables.filter((t) => t.accounts).map((t) => t.relname)
      for (const stream of allStreams) {
        expect(secured).toContain(stream.table)
        for (const child of stream.children) expect(secured).toContain(child.table)
        if (stream.customFields !== undefined) expect(secured).toContain("custom_fields")
      }
      expect(secured).toEqual(expect.arrayContaining(["connections", "oauth_tokens", "sync_runs", "sync_checkpoints", "sync_pass_seen", "webhook_events"]))

      // the app role (the owner, under FORCE) writes a row of each of two accounts into every table, and reads them all
      const seeded = secured.filter((t) => t !== "reader_accounts")
      expect(seeded.length).toBeGreaterThan(15)
      yield* withPgClient(appUrl, async (client) => {
        await client.query(`SET search_path TO ${schema}`)
        const columns = await client.query<{ table_name: string; column_name: string; data_type: string }>(
          `SELECT table_name, column_name, data_type FROM information_schema.columns
           WHERE table_schema = $1 AND is_nullable = 'NO' AND column_default IS NULL AND is_identity = 'NO' ORDER BY ordinal_position`,
          [schema]
        )
        for (const table of ["connections", ...seeded.filter((t) => t !== "connections")]) {
          for (const account of ["acct-a", "acct-b"]) {
            const own = columns.rows.filter((c) => c.table_name === table && c.column_name !== "account_id")
            const names = ["account_id", ...own.map((c) => c.column_name)]
            const values = [`'${account}'`, ...own.map((c) => valueFor(table, c.column_name, c.data_type, account))]
            await client.query(`INSERT INTO ${table} (${names.join(", ")}) VALUES (${values.join(", ")})`)
          }
        }
        for (const table of seeded) {
          const { rows } = await client.query(`SELECT DISTINCT account_id FROM ${table} ORDER BY 1`)
          expect(rows.map((r) => r.account_id), table).toEqual(["acct-a", "acct-b"])
        }
      })

      const granted = yield* runCli(["grant-reader", "--role", analyst, "--account", "acct-a"], env)
      expect(granted.code, granted.stderr).toBe(0)
      expect(granted.stdout).toContain(`${analyst} reads the rows of acct-a (and no other account's)`)

      // the analyst: acct-a's rows in every table, never acct-b's, whichever way it asks
      yield* withPgClient(analystUrl, async (client) => {
        await client.query(`SET search_path TO ${schema}`)
        for (const table of seeded.filter((t) => !secretTables.includes(t))) {
          const { rows } = await client.query(`SELECT DISTINCT account_id FROM ${table}`)
          expect(rows.map((r) => r.account_id), table).toEqual(["acct-a"])
        }
        await expect(client.query("SELECT * FROM oauth_tokens")).rejects.toMatchObject({ code: "42501" })
        await expect(client.query("SELECT * FROM token_keys")).rejects.toMatchObject({ code: "42501" })
        await client.query("CREATE TEMP VIEW every_job AS SELECT account_id FROM jobs")
        expect((await client.query("SELECT DISTINCT account_id FROM every_job")).rows).toEqual([{ account_id: "acct-a" }])
        await client.query(`CREATE FUNCTION pg_temp.every_run() RETURNS SETOF text LANGUAGE sql SECURITY DEFINER AS 'SELECT account_id FROM ${schema}.sync_runs'`)
        expect((await client.query("SELECT DISTINCT pg_temp.every_run() AS account_id")).rows).toEqual([{ account_id: "acct-a" }])
        // a function that would print every row it is given sees only the rows the policy lets through
        await client.query(`CREATE FUNCTION pg_temp.leak(text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'saw %', $1; RETURN true; END $$`)
        const notices: Array<string> = []
        client.on("notice", (notice) => notices.push(notice.message ?? ""))
        await client.query("SELECT count(*) FROM connections WHERE pg_temp.leak(account_id)")
        expect(notices).toEqual(["saw acct-a"])
        await expect(client.query("ALTER TABLE jobs DISABLE ROW LEVEL SECURITY")).rejects.toMatchObject({ code: "42501" })
        await expect(client.query("INSERT INTO reader_accounts (role_name, account_id) VALUES (current_user, 'acct-b')")).rejects.toMatchObject({ code: "42501" })
      })
      const query = (url: string, statement: string) =>
        runQuery(statement).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["QUERY_DATABASE_URL", url], ["DB_SCHEMA", schema]]))))
      expect(yield* query(analystUrl, "SELECT DISTINCT account_id FROM sync_checkpoints")).toEqual([{ account_id: "acct-a" }])
      // the operator's reader (roles.sql) and query without QUERY_DATABASE_URL still read every account
      expect(yield* query(testDatabaseUrlAs(reader, "reader-pw"), "SELECT count(DISTINCT account_id)::int AS n FROM jobs")).toEqual([{ n: 2 }])
      const appQuery = runQuery("SELECT count(DISTINCT account_id)::int AS n FROM webhook_events").pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", appUrl], ["DB_SCHEMA", schema]])))
      )
      expect(yield* appQuery).toEqual([{ n: 2 }])

      // taken back: nothing left to read
      const revoked = yield* runCli(["grant-reader", "--role", analyst, "--revoke"], env)
      expect(revoked.code, revoked.stderr).toBe(0)
      yield* withPgClient(analystUrl, async (client) => {
        await expect(client.query(`SELECT * FROM ${schema}.jobs`)).rejects.toMatchObject({ code: "42501" })
      })
      // roles row-level security cannot limit are refused, with one line
      const refused = yield* runCli(["grant-reader", "--role", reader, "--account", "acct-a"], env)
      expect([refused.code, refused.stderr]).toEqual([2, `grant-reader: ${reader} is a member of ${schema}_query, which reads every account\n`])
      const unknown = yield* runCli(["grant-reader", "--role", analyst, "--account", "acct-zzz"], env)
      expect([unknown.code, unknown.stderr]).toEqual([2, "grant-reader: no connected account acct-zzz (see account-sync status)\n"])
    }),
  180_000
)

import { SqlClient, type SqlError } from "@effect/sql"
import { Effect } from "effect"

/**
 * Tables without accounts' rows: never granted to a reader (the OAuth flows in progress, the key check, migrations,
 * what answered the pinned API version, which tables keep history).
 */
export const tablesWithoutAccounts: ReadonlyArray<string> = ["oauth_pending", "token_keys", "schema_migrations", "api_versions", "history_tables"]

/** Tables with accounts' rows that a reader is still never granted: the (encrypted) tokens. */
export const secretTables: ReadonlyArray<string> = ["oauth_tokens"]

/**
 * The OAuth state: the (encrypted) tokens, the flows in progress (state, PKCE verifier, the visitor's address) and
 * the key check. Only their owner, the app role, reads them: any grant on them (to `<schema>_query`, roles.sql's
 * reader, an analyst, PUBLIC: by a default privilege, a `GRANT ... ON ALL TABLES` of a migration or by hand) is taken
 * back after every migration run.
 */
export const ownerOnlyTables: ReadonlyArray<string> = [...secretTables, "oauth_pending", "token_keys"]

const sqlList = (names: ReadonlyArray<string>) => `ARRAY[${names.map((t) => `'${t}'`).join(", ")}]`

/**
 * Row-level security on every table of the schema that has an `account_id` (stream tables, child tables, custom
 * fields, history tables, connections, runs, checkpoints, seen ids, change events: whatever the migrations made),
 * forced on the owner too, with two policies: `account_sync_owner` (the owner and `<schema>_query` see and write
 * every row) and `account_sync_readers` (any other role reads the rows of the accounts `reader_accounts` lists for
 * it). `reader_accounts` itself shows a reader its own grants. Every reader role listed is granted SELECT on those
 * tables (the tokens excepted), the ones new since its grant included. Every grant on the OAuth state
 * (`ownerOnlyTables`) to another role is revoked. Idempotent: after every migration run.
 */
const rowSecuritySql = `
DO $$
DECLARE
  t record;
  reader text;
  query_role text := left(current_schema() || '_query', 63);
  owners text;
  grantee text;
BEGIN
  FOR t IN
    SELECT c.oid, c.relname, c.relrowsecurity AND c.relforcerowsecurity AS secured, pg_get_userbyid(c.relowner) AS owner
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped)
  LOOP
    owners := format('%I', t.owner) || CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = query_role) THEN format(', %I', query_role) ELSE '' END;
    BEGIN
      IF NOT EXISTS (SELECT FROM pg_policy p WHERE p.polrelid = t.oid AND p.polname = 'account_sync_owner') THEN
        EXECUTE format('CREATE POLICY account_sync_owner ON %I TO %s USING (true) WITH CHECK (true)', t.relname, owners);
      END IF;
      IF NOT EXISTS (SELECT FROM pg_policy p WHERE p.polrelid = t.oid AND p.polname = 'account_sync_readers') THEN
        IF t.relname = 'reader_accounts' THEN
          EXECUTE 'CREATE POLICY account_sync_readers ON reader_accounts FOR SELECT USING (role_name = current_user)';
        ELSE
          EXECUTE format('CREATE POLICY account_sync_readers ON %I FOR SELECT
            USING (account_id IN (SELECT r.account_id FROM reader_accounts r WHERE r.role_name = current_user))', t.relname);
        END IF;
      END IF;
    EXCEPTION WHEN duplicate_object THEN NULL; -- another process made it at the same time
    END;
    IF NOT t.secured THEN
      EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', t.relname);
    END IF;
  END LOOP;
  FOR reader IN SELECT DISTINCT r.role_name FROM reader_accounts r JOIN pg_roles g ON g.rolname = r.role_name LOOP
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', current_schema(), reader);
    FOR t IN
      SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> ALL (${sqlList(secretTables)})
        AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped)
        AND NOT has_table_privilege(reader, c.oid, 'SELECT')
    LOOP
      EXECUTE format('GRANT SELECT ON %I TO %I', t.relname, reader);
    END LOOP;
  END LOOP;
  FOR t IN
    SELECT c.relname, c.relacl, c.relowner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relname = ANY (${sqlList(ownerOnlyTables)}) AND c.relacl IS NOT NULL
  LOOP
    FOR grantee IN
      SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END
      FROM aclexplode(t.relacl) a WHERE a.grantee <> t.relowner
    LOOP
      EXECUTE format('REVOKE ALL ON %I FROM %s', t.relname, grantee);
    END LOOP;
  END LOOP;
END $$`

/** Keeps every table with accounts' rows under row-level security (see rowSecuritySql); run after the migrations. */
export const ensureRowSecurity: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(rowSecuritySql).pipe(Effect.asVoid)
)

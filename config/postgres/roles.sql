-- The database roles of account-sync, for psql (run as a superuser, or a role with CREATEROLE that may create schemas):
--
--   psql "$ADMIN_URL" -v app_password=... [-v reader_password=...] [-v schema=account_sync]
--        [-v app_role=account_sync] [-v reader_role=account_sync_reader] [-v queue_schema=<schema>_queue]
--        -f config/postgres/roles.sql
--
-- app_role: what DATABASE_URL logs in as. Not a superuser, creates no database, role or schema: it owns DB_SCHEMA
--   and what it creates there (the migrations' tables), the job queue's schema (queue_schema, QUEUE_SCHEMA: pg-boss
--   installs its tables there when workers run), and nothing else.
-- <schema>_query: a role that cannot log in, which `account-sync query` switches to when it logs in with DATABASE_URL
--   (no QUERY_DATABASE_URL): it reads DB_SCHEMA's tables and may not signal the app role's sessions. The app role is
--   made a member so it may switch to it; the migrations grant it the tables.
-- reader_role (when reader_password is given): what QUERY_DATABASE_URL logs in as for `account-sync query`. It can
--   read DB_SCHEMA's tables (present and future), every account's rows (a member of <schema>_query), and write
--   nothing; its sessions are read-only by default. Never the OAuth state (oauth_tokens, oauth_pending, token_keys):
--   nobody but the app role reads those (the migrations take back any grant on them after every run). Nothing of
--   the queue's schema. For a reader of some accounts only: account-sync grant-reader.
-- Running it again changes the passwords and grants, never the data. docker-compose.yml runs it on first start
-- (init-roles.sh).
\set ON_ERROR_STOP on
\if :{?app_password}
\else
  DO $$ BEGIN RAISE EXCEPTION 'roles.sql: pass the app role''s password: -v app_password=...'; END $$;
\endif
\if :{?schema}
\else
  \set schema account_sync
\endif
\if :{?app_role}
\else
  \set app_role account_sync
\endif
\if :{?reader_role}
\else
  \set reader_role account_sync_reader
\endif
\if :{?queue_schema}
\else
  SELECT left(:'schema' || '_queue', 63) AS queue_schema \gset
\endif

SELECT format('CREATE ROLE %I', :'app_role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'app_role') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'app_role', :'app_password') \gexec

-- the schema is the app role's: its tables are its own; it gets no CREATE on the database (no other schema)
SELECT format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', :'schema', :'app_role') \gexec
SELECT format('ALTER SCHEMA %I OWNER TO %I', :'schema', :'app_role') \gexec
SELECT format('CREATE ROLE %I NOLOGIN', left(:'schema' || '_query', 63)) WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = left(:'schema' || '_query', 63)) \gexec
SELECT format('GRANT %I TO %I', left(:'schema' || '_query', 63), :'app_role') \gexec
-- the job queue's schema, the app role's too: pg-boss is started so that it creates no schema (CREATE on the database
-- is what CREATE SCHEMA IF NOT EXISTS needs, even for a schema that exists), only its tables in this one
SELECT format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', :'queue_schema', :'app_role') \gexec
SELECT format('ALTER SCHEMA %I OWNER TO %I', :'queue_schema', :'app_role') \gexec

-- nobody creates objects in public (the default from Postgres 15 on; earlier versions let every role)
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

\if :{?reader_password}
SELECT format('CREATE ROLE %I', :'reader_role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'reader_role') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'reader_role', :'reader_password') \gexec
SELECT format('ALTER ROLE %I SET default_transaction_read_only = on', :'reader_role') \gexec
SELECT format('GRANT USAGE ON SCHEMA %I TO %I', :'schema', :'reader_role') \gexec
SELECT format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', :'schema', :'reader_role') \gexec
-- but not the OAuth state (the app role's migrations take it back again after every run: src/db/rowSecurity.ts)
SELECT format('REVOKE ALL ON %I.%I FROM %I, %I', :'schema', t, :'reader_role', left(:'schema' || '_query', 63))
  FROM unnest(ARRAY['oauth_tokens', 'oauth_pending', 'token_keys']) t WHERE to_regclass(format('%I.%I', :'schema', t)) IS NOT NULL \gexec
-- the tables the app role creates later (every migration) are readable too
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT SELECT ON TABLES TO %I', :'app_role', :'schema', :'reader_role') \gexec
-- every account's rows: the row-level security policies let <schema>_query (and its members) read them all
SELECT format('GRANT %I TO %I', left(:'schema' || '_query', 63), :'reader_role') \gexec
\endif

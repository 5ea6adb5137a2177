-- The database roles of account-sync, for psql (run as a superuser, or a role with CREATEROLE that may create schemas):
--
--   psql "$ADMIN_URL" -v app_password=... [-v reader_password=...] [-v schema=account_sync]
--        [-v app_role=account_sync] [-v reader_role=account_sync_reader] -f config/postgres/roles.sql
--
-- app_role: what DATABASE_URL logs in as. Not a superuser, creates no database, role or schema: it owns DB_SCHEMA
--   and what it creates there (the migrations' tables), and nothing else.
-- reader_role (when reader_password is given): what QUERY_DATABASE_URL logs in as for `account-sync query`. It can
--   read DB_SCHEMA's tables (present and future) and write nothing; its sessions are read-only by default.
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

SELECT format('CREATE ROLE %I', :'app_role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'app_role') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'app_role', :'app_password') \gexec

-- the schema is the app role's: its tables are its own; it gets no CREATE on the database (no other schema)
SELECT format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', :'schema', :'app_role') \gexec
SELECT format('ALTER SCHEMA %I OWNER TO %I', :'schema', :'app_role') \gexec
-- nobody creates objects in public (the default from Postgres 15 on; earlier versions let every role)
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

\if :{?reader_password}
SELECT format('CREATE ROLE %I', :'reader_role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'reader_role') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'reader_role', :'reader_password') \gexec
SELECT format('ALTER ROLE %I SET default_transaction_read_only = on', :'reader_role') \gexec
SELECT format('GRANT USAGE ON SCHEMA %I TO %I', :'schema', :'reader_role') \gexec
SELECT format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', :'schema', :'reader_role') \gexec
-- the tables the app role creates later (every migration) are readable too
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT SELECT ON TABLES TO %I', :'app_role', :'schema', :'reader_role') \gexec
\endif

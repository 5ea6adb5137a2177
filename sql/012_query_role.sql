-- The role `account-sync query` switches to when it logs in with DATABASE_URL (no QUERY_DATABASE_URL): <schema>_query,
-- a role that cannot log in, may read this schema's tables (present and future) and nothing else. Behind the parser
-- that refuses side effects, it is the wall that keeps `query` from signalling the connector's own sessions
-- (pg_terminate_backend needs the privileges of the session's role) and from any privilege of the app role.
-- Roles belong to the cluster: it is created here only when the migrating role may create roles (a superuser, or
-- CREATEROLE); config/postgres/roles.sql creates it for an app role that may not.
DO $$
DECLARE
  query_role text := left(current_schema() || '_query', 63);
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = query_role) THEN
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
      RAISE NOTICE 'no role %: query without QUERY_DATABASE_URL runs as %; create it with config/postgres/roles.sql', query_role, current_user;
      RETURN;
    END IF;
    EXECUTE format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', query_role);
  END IF;
  IF NOT pg_has_role(current_user, query_role, 'MEMBER') THEN
    EXECUTE format('GRANT %I TO %I', query_role, current_user);
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', current_schema(), query_role);
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', current_schema(), query_role);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT ON TABLES TO %I', current_schema(), query_role);
END $$;

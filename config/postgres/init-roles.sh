#!/bin/sh
# docker-compose.yml mounts this in the postgres image's /docker-entrypoint-initdb.d: on the first start (empty data
# volume) it creates account-sync's roles and schema with roles.sql. The passwords come from the environment.
set -eu
: "${ACCOUNT_SYNC_DB_PASSWORD:?set ACCOUNT_SYNC_DB_PASSWORD (the password of the account_sync role)}"
set -- -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v schema="${DB_SCHEMA:-account_sync}" \
  -v app_role="${ACCOUNT_SYNC_DB_USER:-account_sync}" \
  -v app_password="$ACCOUNT_SYNC_DB_PASSWORD"
if [ -n "${ACCOUNT_SYNC_READER_PASSWORD:-}" ]; then
  set -- "$@" -v reader_role="${ACCOUNT_SYNC_READER_USER:-account_sync_reader}" -v reader_password="$ACCOUNT_SYNC_READER_PASSWORD"
fi
psql "$@" -f "${ACCOUNT_SYNC_ROLES_SQL:-/account-sync/roles.sql}"

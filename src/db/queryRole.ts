import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The role `query` switches to on DATABASE_URL (sql/012_query_role.sql makes it; Postgres cuts names at 63). */
export const queryRoleOf = (schema: string): string => `${schema}_query`.slice(0, 63)

/**
 * Drops a schema and the query role its migrations made (roles are the cluster's: a schema dropped without it leaves
 * the role behind). For the demo, tests and benches that make schemas of their own; failures are ignored.
 */
export const dropSchemaAndQueryRole = (schema: string): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(
      sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore),
      sql.unsafe(`DROP ROLE IF EXISTS "${queryRoleOf(schema)}"`).pipe(Effect.ignore)
    )
  )

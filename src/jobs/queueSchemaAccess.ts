import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * What this login may do with the job queue's schema, and so how pg-boss is started. pg-boss's install runs
 * `CREATE SCHEMA IF NOT EXISTS`, which Postgres refuses without CREATE on the database even when the schema exists
 * (the privilege is checked first): where the schema is there and usable it is started with `createSchema: false`.
 */
export type QueueSchemaAccess =
  | { readonly _tag: "Usable"; readonly createSchema: boolean; readonly role: string }
  /** One line: the role, the privilege it lacks and the command that gives it. */
  | { readonly _tag: "Missing"; readonly reason: string }

const AccessRow = Schema.Struct({
  role: Schema.String,
  database: Schema.String,
  schema: Schema.String,
  exists: Schema.Boolean,
  usable: Schema.Boolean,
  mayCreateSchema: Schema.Boolean
})

const rolesSql = "config/postgres/roles.sql"

/** Reads the login's privileges on `schema` (a name as pg-boss writes it in its statements) and on the database. */
export const queueSchemaAccess = (schema: string): Effect.Effect<QueueSchemaAccess, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // to_regnamespace reads the name as SQL does (folded unless quoted), like pg-boss's own statements
    const rows = yield* sql`
      SELECT quote_ident(current_user) AS role, quote_ident(current_database()) AS database,
        coalesce(to_regnamespace(${schema})::text, ${schema}) AS schema,
        to_regnamespace(${schema}) IS NOT NULL AS exists,
        coalesce(has_schema_privilege(to_regnamespace(${schema}), 'USAGE') AND has_schema_privilege(to_regnamespace(${schema}), 'CREATE'), false) AS usable,
        has_database_privilege(current_database(), 'CREATE') AS "mayCreateSchema"`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(AccessRow))),
      Effect.orDie
    )
    const row = rows[0]!
    if (row.exists && row.usable) return { _tag: "Usable", createSchema: false, role: row.role } as const
    if (!row.exists && row.mayCreateSchema) return { _tag: "Usable", createSchema: true, role: row.role } as const
    return {
      _tag: "Missing",
      reason: row.exists
        ? `the role ${row.role} lacks USAGE and CREATE on the job queue's schema ${row.schema}; as an admin: ALTER SCHEMA ${row.schema} OWNER TO ${row.role} (or run ${rolesSql} again)`
        : `the job queue's schema ${row.schema} does not exist and the role ${row.role} may not create it (no CREATE on database ${row.database}); as an admin: CREATE SCHEMA ${row.schema} AUTHORIZATION ${row.role} (or run ${rolesSql} again, which makes it)`
    } as const
  })

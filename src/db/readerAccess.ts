import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { DatabaseTopology } from "./Database.js"
import { queryRoleOf } from "./queryRole.js"
import { rowsOrDie } from "./rows.js"
import { ensureRowSecurity, secretTables } from "./rowSecurity.js"

/** A reader role that cannot be limited to accounts, or accounts that do not exist: said in one line. */
export class ReaderAccessRefused extends Data.TaggedError("ReaderAccessRefused")<{ readonly reason: string }> {
  override get message() {
    return `grant-reader: ${this.reason}`
  }
}

const RoleRow = Schema.Struct({ superuser: Schema.Boolean, bypass: Schema.Boolean, owner: Schema.Boolean, everything: Schema.Boolean })
const AccountRow = Schema.Struct({ account_id: Schema.String })

const schemaOf = (sql: SqlClient.SqlClient) =>
  Effect.map(
    rowsOrDie(SqlSchema.single({ Request: Schema.Void, Result: Schema.Struct({ s: Schema.String }), execute: () => sql`SELECT current_schema() AS s` })(undefined)),
    (r) => r.s
  )

/** What `role` is, or why row-level security cannot limit it. */
const checkRole = (sql: SqlClient.SqlClient, role: string) =>
  Effect.gen(function* () {
    const queryRole = queryRoleOf(yield* schemaOf(sql))
    const rows = yield* sql`
      SELECT r.rolsuper AS superuser, r.rolbypassrls AS bypass, pg_has_role(r.oid, current_user, 'USAGE') AS owner,
        EXISTS (SELECT FROM pg_roles q WHERE q.rolname = ${queryRole} AND pg_has_role(r.oid, q.oid, 'USAGE')) AS everything
      FROM pg_roles r WHERE r.rolname = ${role}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(RoleRow))), Effect.orDie)
    const found = rows[0]
    if (found === undefined) {
      return yield* new ReaderAccessRefused({ reason: `there is no role ${role}: create it first (CREATE ROLE ${role} LOGIN PASSWORD '...', as a role that may create roles)` })
    }
    if (found.superuser || found.bypass) return yield* new ReaderAccessRefused({ reason: `${role} is a superuser or has BYPASSRLS: row-level security does not limit it` })
    if (found.owner) return yield* new ReaderAccessRefused({ reason: `${role} has the privileges of the app role, which owns the tables: it reads every account` })
    if (found.everything) return yield* new ReaderAccessRefused({ reason: `${role} is a member of ${queryRole}, which reads every account` })
  })

/**
 * Lets `role` read the rows of `accounts` (connected accounts) and of no other, in every table with accounts' rows:
 * the accounts are listed for it in `reader_accounts`, and it is granted SELECT on those tables (never the tokens).
 * Returns the tables it may read.
 */
export const grantReader = (role: string, accounts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* refuseEmbedded
    yield* checkRole(sql, role)
    const known = yield* rowsOrDie(
      SqlSchema.findAll({
        Request: Schema.Array(Schema.String),
        Result: AccountRow,
        execute: (ids) => sql`SELECT account_id FROM connections WHERE account_id IN ${sql.in(ids)}`
      })(accounts)
    )
    const unknown = accounts.filter((a) => !known.some((k) => k.account_id === a))
    if (unknown.length > 0) return yield* new ReaderAccessRefused({ reason: `no connected account ${unknown.join(", ")} (see account-sync status)` })
    yield* sql.withTransaction(
      Effect.gen(function* () {
        for (const account of accounts) {
          yield* sql`INSERT INTO reader_accounts (role_name, account_id) VALUES (${role}, ${account}) ON CONFLICT DO NOTHING`
        }
        yield* ensureRowSecurity
      })
    )
    return yield* tablesOf(sql, role)
  })

/** Takes back `role`'s access to `accounts` (every account when none is given); without any left, its grants too. */
export const revokeReader = (role: string, accounts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* refuseEmbedded
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        if (accounts.length === 0) yield* sql`DELETE FROM reader_accounts WHERE role_name = ${role}`
        else yield* sql`DELETE FROM reader_accounts WHERE role_name = ${role} AND account_id IN ${sql.in(accounts)}`
        const left = yield* rowsOrDie(
          SqlSchema.findAll({
            Request: Schema.String,
            Result: AccountRow,
            execute: (name) => sql`SELECT account_id FROM reader_accounts WHERE role_name = ${name} ORDER BY account_id`
          })(role)
        )
        const exists = (yield* sql`SELECT 1 FROM pg_roles WHERE rolname = ${role}`).length > 0
        if (left.length === 0 && exists) {
          yield* sql.unsafe(`REVOKE SELECT ON ALL TABLES IN SCHEMA ${yield* schemaOf(sql)} FROM "${role.replace(/"/g, '""')}"`)
        }
        return left.map((r) => r.account_id)
      })
    )
  })

const refuseEmbedded = Effect.flatMap(DatabaseTopology, ({ singleSession }) =>
  singleSession
    ? Effect.fail(new ReaderAccessRefused({ reason: "needs a Postgres server (DATABASE_URL): the embedded database has no roles to log in as" }))
    : Effect.void
)

const tablesOf = (sql: SqlClient.SqlClient, role: string): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
  Effect.map(
    rowsOrDie(
      SqlSchema.findAll({
        Request: Schema.String,
        Result: Schema.Struct({ relname: Schema.String }),
        execute: (name) => sql`
          SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND has_table_privilege(${name}, c.oid, 'SELECT')
          ORDER BY c.relname`
      })(role)
    ),
    (rows) => rows.map((r) => r.relname).filter((t) => !secretTables.includes(t))
  )

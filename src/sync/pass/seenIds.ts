import type { SqlClient, Statement } from "@effect/sql"

/**
 * The ids the full pass in progress saw, as a subquery of `id`: what its sweep keeps. Used as `NOT EXISTS (SELECT 1
 * FROM (seen) s WHERE s.id = t.id)`, Postgres flattens it into an anti-join on the seen ids' primary key.
 */
export const seenIds = (sql: SqlClient.SqlClient, accountId: string, stream: string): Statement.Fragment =>
  sql`SELECT id FROM sync_pass_seen WHERE account_id = ${accountId} AND stream = ${stream}`

/**
 * The first `limit` live rows of the account's `table` after `after` (by id) that the full pass in progress did not
 * see: the candidates its sweep re-reads before marking anything, each with its `near` column as text (ISO 8601 for a
 * time), null without one. The same anti-join as the sweep's, and planned the same way (sweepPlannerSettings):
 * without statistics a nested loop rescans every seen id for each row, which took minutes for 50,000 rows.
 */
export const unseenStatement = (
  sql: SqlClient.SqlClient,
  options: { readonly accountId: string; readonly stream: string; readonly table: string; readonly after: string; readonly limit: number; readonly near?: string | undefined }
) => sql`
  SELECT t.id, ${options.near === undefined ? sql`NULL::text` : sql`to_jsonb(t.${sql(options.near)}) #>> '{}'`} AS near FROM ${sql(options.table)} t
  WHERE t.account_id = ${options.accountId} AND t.deleted_at IS NULL AND t.id > ${options.after}
    AND NOT EXISTS (SELECT 1 FROM (${seenIds(sql, options.accountId, options.stream)}) AS s WHERE s.id = t.id)
  ORDER BY t.id LIMIT ${options.limit}`

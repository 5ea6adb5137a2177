import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Schema } from "effect"
import { rowsOrDie } from "../../db/rows.js"
import type { AnyStream } from "../streams/Stream.js"

const IdRow = Schema.Struct({ id: Schema.String })

/**
 * The end-of-full-pass sweep: the account's live rows whose id is not among `seen` (a subquery of `id`: the ids the
 * pass saw, pass/seenIds) marked deleted. An anti-join on the seen ids' primary key. Its rows are counted, not read.
 */
export const sweepStatement = (sql: SqlClient.SqlClient, stream: AnyStream, accountId: string, seen: Statement.Fragment) => sql`
  UPDATE ${sql(stream.table)} AS t SET deleted_at = now()
  WHERE t.account_id = ${accountId} AND t.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM (${seen}) AS s WHERE s.id = t.id)
  RETURNING t.id`

/**
 * For the rest of the sweep's transaction. Without statistics (a first backfill outruns auto-analyze, or
 * autovacuum is off) Postgres estimates a handful of rows on each side and plans the anti-join as a nested loop
 * over the rescanned seen ids: quadratic, minutes for 200,000 rows. Without nested loops it is a hash or merge
 * anti-join, linear whatever the statistics say. (Not ANALYZE in the transaction: its lock would serialize the
 * accounts' sweeps.)
 */
export const sweepPlannerSettings = "SET LOCAL enable_nestloop = off"

/**
 * The rows that follow their parent out: the line items and custom fields of the account's parents marked deleted.
 * Run after the parents are marked, in the same transaction.
 */
export const dependentSweepStatements = (sql: SqlClient.SqlClient, stream: AnyStream, accountId: string): ReadonlyArray<Statement.Statement<unknown>> => [
  ...stream.children.map(
    (child) => sql`
  UPDATE ${sql(child.table)} AS c SET deleted_at = now()
  FROM ${sql(stream.table)} AS p
  WHERE c.account_id = ${accountId} AND p.account_id = ${accountId} AND p.id = c.${sql(child.parentColumn)}
    AND p.deleted_at IS NOT NULL AND c.deleted_at IS NULL`
  ),
  ...(stream.customFields === undefined
    ? []
    : [
        sql`
  UPDATE custom_fields AS c SET deleted_at = now()
  FROM ${sql(stream.table)} AS p
  WHERE c.account_id = ${accountId} AND c.parent_type = ${stream.customFields} AND p.account_id = ${accountId} AND p.id = c.parent_id
    AND p.deleted_at IS NOT NULL AND c.deleted_at IS NULL`
      ])
]

/**
 * Rows found gone one by one (a destroy event, a re-read that no longer finds them): marked deleted as of `at` with
 * their line items and custom fields. The parents' statement returns the ids it marked; the dependents' follow it in
 * the same transaction.
 */
export const markDeletedStatements = (sql: SqlClient.SqlClient, stream: AnyStream, accountId: string, ids: ReadonlyArray<string>, at: Date) => {
  const idList = JSON.stringify(ids)
  const when = at.toISOString()
  return {
    parents: rowsOrDie(
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: IdRow,
        execute: () => sql`
  UPDATE ${sql(stream.table)} SET deleted_at = ${when}::timestamptz
  WHERE account_id = ${accountId} AND id IN (SELECT jsonb_array_elements_text(${idList}::jsonb)) AND deleted_at IS NULL
  RETURNING id`
      })(undefined)
    ),
    dependents: [
      ...stream.children.map(
        (child) => sql`
  UPDATE ${sql(child.table)} SET deleted_at = ${when}::timestamptz
  WHERE account_id = ${accountId} AND ${sql(child.parentColumn)} IN (SELECT jsonb_array_elements_text(${idList}::jsonb)) AND deleted_at IS NULL`
      ),
      ...(stream.customFields === undefined
        ? []
        : [
            sql`
  UPDATE custom_fields SET deleted_at = ${when}::timestamptz
  WHERE account_id = ${accountId} AND parent_type = ${stream.customFields} AND parent_id IN (SELECT jsonb_array_elements_text(${idList}::jsonb))
    AND deleted_at IS NULL`
          ])
    ] as ReadonlyArray<Statement.Statement<unknown>>
  }
}

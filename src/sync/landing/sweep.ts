import type { AnyStream } from "../streams/Stream.js"

/**
 * The end-of-full-pass sweep: live rows of the account the pass did not see. An anti-join on the primary key of
 * sync_pass_seen ($1 account, $2 stream).
 */
export const sweepStatement = (stream: AnyStream) => `
  UPDATE ${stream.table} AS t SET deleted_at = now()
  WHERE t.account_id = $1 AND t.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM sync_pass_seen s WHERE s.account_id = t.account_id AND s.stream = $2 AND s.id = t.id)
  RETURNING t.id`

/**
 * For the rest of the sweep's transaction. Without statistics (a first backfill outruns auto-analyze, or
 * autovacuum is off) Postgres estimates a handful of rows on each side and plans the anti-join as a nested loop
 * over a rescanned sync_pass_seen: quadratic, minutes for 200,000 rows. Without nested loops it is a hash or merge
 * anti-join, linear whatever the statistics say. (Not ANALYZE in the transaction: its lock would serialize the
 * accounts' sweeps.)
 */
export const sweepPlannerSettings = "SET LOCAL enable_nestloop = off"

/**
 * The rows that follow their parent out: the line items and custom fields of the account's parents marked deleted
 * ($1 account). Run after the parents are marked, in the same transaction.
 */
export const dependentSweepStatements = (stream: AnyStream): ReadonlyArray<string> => [
  ...stream.children.map(
    (child) => `
  UPDATE ${child.table} AS c SET deleted_at = now()
  FROM ${stream.table} AS p
  WHERE c.account_id = $1 AND p.account_id = $1 AND p.id = c."${child.parentColumn}" AND p.deleted_at IS NOT NULL AND c.deleted_at IS NULL`
  ),
  ...(stream.customFields === undefined
    ? []
    : [
        `
  UPDATE custom_fields AS c SET deleted_at = now()
  FROM ${stream.table} AS p
  WHERE c.account_id = $1 AND c.parent_type = '${stream.customFields}' AND p.account_id = $1 AND p.id = c.parent_id
    AND p.deleted_at IS NOT NULL AND c.deleted_at IS NULL`
      ])
]

/**
 * Rows found gone one by one (a destroy event, a re-read that no longer finds them): marked deleted as of $3 with
 * their line items and custom fields ($1 account, $2 the ids as a JSON array). The parent's statement comes first
 * and returns the ids it marked.
 */
export const markDeletedStatements = (stream: AnyStream): ReadonlyArray<string> => [
  `UPDATE ${stream.table} SET deleted_at = $3::timestamptz
  WHERE account_id = $1 AND id IN (SELECT jsonb_array_elements_text($2::jsonb)) AND deleted_at IS NULL
  RETURNING id`,
  ...stream.children.map(
    (child) => `
  UPDATE ${child.table} SET deleted_at = $3::timestamptz
  WHERE account_id = $1 AND "${child.parentColumn}" IN (SELECT jsonb_array_elements_text($2::jsonb)) AND deleted_at IS NULL`
  ),
  ...(stream.customFields === undefined
    ? []
    : [
        `
  UPDATE custom_fields SET deleted_at = $3::timestamptz
  WHERE account_id = $1 AND parent_type = '${stream.customFields}' AND parent_id IN (SELECT jsonb_array_elements_text($2::jsonb))
    AND deleted_at IS NULL`
      ])
]

import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Columns of a current row or a version that are no part of what the version tracks. */
const current = `to_jsonb(t) - 'raw' - 'synced_at' - 'deleted_at' - 'updated_at' - 'first_seen_at'`
const version = `to_jsonb(h) - 'valid_from' - 'valid_to' - 'ended_by' - 'recorded_at' - 'updated_at' - 'first_seen_at'`

export interface HistoryFindings {
  readonly versions: number
  /** Live rows whose open version is missing or differs from them. */
  readonly liveWithoutItsVersion: number
  /** Rows marked deleted whose version is still open. */
  readonly deletedStillOpen: number
  /** A version equal to the one before it (written twice). */
  readonly repeated: number
  /** A version that does not end where the next begins, or overlaps it. */
  readonly broken: number
}

/**
 * The history of `table` (with SYNC_HISTORY on) against its current rows, after any faults: every live row has
 * exactly its open version, no deleted row has one, no version repeats the one before it, and each row's versions
 * follow one another without gap or overlap.
 */
export const checkHistory = (sql: SqlClient.SqlClient, table: string, keys: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const history = `${table}_history`
    const on = keys.map((k) => `h.${k} = t.${k}`).join(" AND ")
    const partition = keys.map((k) => `h.${k}`).join(", ")
    const [row] = yield* sql.unsafe<{ versions: number; live_without: number; deleted_open: number; repeated: number; broken: number }>(`
      SELECT
        (SELECT count(*)::int FROM ${history}) AS versions,
        (SELECT count(*)::int FROM ${table} t WHERE t.deleted_at IS NULL AND NOT EXISTS (
          SELECT FROM ${history} h WHERE ${on} AND h.valid_to IS NULL AND (${version}) = (${current}))) AS live_without,
        (SELECT count(*)::int FROM ${table} t JOIN ${history} h ON ${on} AND h.valid_to IS NULL WHERE t.deleted_at IS NOT NULL) AS deleted_open,
        (SELECT count(*)::int FROM (
          SELECT (${version}) AS v, lag(${version}) OVER w AS before, lag(h.ended_by) OVER w AS before_ended
          FROM ${history} h WINDOW w AS (PARTITION BY ${partition} ORDER BY h.valid_from)) x
          WHERE x.v = x.before AND x.before_ended = 'updated') AS repeated,
        (SELECT count(*)::int FROM (
          SELECT h.valid_to, h.ended_by, lead(h.valid_from) OVER (PARTITION BY ${partition} ORDER BY h.valid_from) AS next
          FROM ${history} h) x
          WHERE (x.ended_by = 'updated' AND x.valid_to IS DISTINCT FROM x.next) OR (x.next IS NOT NULL AND (x.valid_to IS NULL OR x.valid_to > x.next))) AS broken`)
    return {
      versions: row!.versions,
      liveWithoutItsVersion: row!.live_without,
      deletedStillOpen: row!.deleted_open,
      repeated: row!.repeated,
      broken: row!.broken
    } satisfies HistoryFindings
  })

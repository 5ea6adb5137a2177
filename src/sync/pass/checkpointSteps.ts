import type { SqlClient } from "@effect/sql"
import type { LandingStep } from "../landing/LandingStep.js"

/**
 * The high-water mark a pass moves the checkpoint to, from the mark PassState.batchHighWater hands it: a full pass with
 * each batch (the batch's newest updatedAt), an incremental pass when it ends (the newest of the whole pass). Neither
 * goes past the start of the pass, so rows edited behind the pass after it started stay in reach of the next
 * incremental pass; an incremental pass never moves the mark back.
 */
const passMark = {
  full: (sql: SqlClient.SqlClient, mark: string | null) => sql`LEAST(GREATEST(high_water_mark, ${mark}::timestamptz), pass_started_at)`,
  incremental: (sql: SqlClient.SqlClient, mark: string | null) => sql`GREATEST(high_water_mark, LEAST(${mark}::timestamptz, pass_started_at))`
}

/** What the end of an incremental pass sets: the mark moved (`passMark`), the pass's start recorded as its last incremental pass. */
export const incrementalEnd = (sql: SqlClient.SqlClient, highWaterMark: string | null) => sql`
  pass_kind = NULL, position = NULL, anchors = NULL, shifted = false,
  high_water_mark = ${passMark.incremental(sql, highWaterMark)},
  last_incremental_pass_at = pass_started_at, data_current_at = GREATEST(data_current_at, pass_started_at), updated_at = now()`

/**
 * `pass`, the page statement's checkpoint step: the checkpoint of the pass in progress moves to the batch's position
 * and anchors (and, in a full pass, the mark to the batch's, `passMark`), or the batch that ends an incremental pass
 * ends it (`incrementalEnd`). It matches only while a pass of this kind is
 * in progress, and every other step depends on it: a page of a pass that ended is a retry of a page whose COMMIT went
 * through but whose acknowledgement was lost; it landed already. Rows landed outside a pass always land; `pass` then
 * says whether the stream's pass in progress records seen ids.
 */
export const checkpointStep: LandingStep = {
  name: "pass",
  sql: (sql, v) =>
    v.pass === undefined
      ? sql`SELECT tracks_seen FROM sync_checkpoints WHERE account_id = ${v.accountId} AND stream = ${v.stream.name} AND (SELECT held FROM lease)
          UNION ALL SELECT false WHERE NOT EXISTS (SELECT 1 FROM sync_checkpoints WHERE account_id = ${v.accountId} AND stream = ${v.stream.name})
            AND (SELECT held FROM lease)`
      : v.pass.kind === "incremental" && v.pass.endsIncremental === true
        ? sql`
    UPDATE sync_checkpoints SET ${incrementalEnd(sql, v.pass.highWaterMark)}
    WHERE account_id = ${v.accountId} AND stream = ${v.stream.name} AND pass_kind = 'incremental' AND (SELECT held FROM lease)
    RETURNING tracks_seen`
        : sql`
    UPDATE sync_checkpoints SET
      partition = ${v.pass.partition},
      position = ${v.pass.position},
      anchors = ${JSON.stringify(v.pass.anchors)}::jsonb,
      shifted = shifted OR ${v.pass.shifted},
      high_water_mark = CASE WHEN ${v.pass.kind} = 'full' THEN ${passMark.full(sql, v.pass.highWaterMark)} ELSE high_water_mark END,
      updated_at = now()
    WHERE account_id = ${v.accountId} AND stream = ${v.stream.name} AND pass_kind = ${v.pass.kind} AND (SELECT held FROM lease)
    RETURNING tracks_seen`
}

/**
 * `seen`, the page statement's last step: the ids a full pass saw (or re-read before its sweep), for the sweep (only
 * when the pass records them); a node not landed because the stored row is newer was seen too.
 */
export const seenStep: LandingStep = {
  name: "seen",
  sql: (sql, v) => sql`
    INSERT INTO sync_pass_seen (account_id, stream, id)
    SELECT ${v.accountId}, ${v.stream.name}, node ->> 'id' FROM page
    WHERE ${v.recordSeen} AND (SELECT tracks_seen FROM pass)
    ON CONFLICT DO NOTHING`
}

-- A pass pages by position and joins each page on a row it already landed (src/sync/Continuation.ts), so it is
-- exact whatever the service's cursors are. The checkpoint of a pass in progress is that position and the ids of
-- its last landed page; a pass in progress when this migration runs starts over.
ALTER TABLE sync_checkpoints DROP COLUMN cursor;
ALTER TABLE sync_checkpoints ADD COLUMN partition integer NOT NULL DEFAULT 0;  -- which of the stream's lists (users: by status)
ALTER TABLE sync_checkpoints ADD COLUMN position integer;          -- rows of the partition's order landed (0: none)
ALTER TABLE sync_checkpoints ADD COLUMN anchors jsonb;             -- ids of the last landed page, in order
ALTER TABLE sync_checkpoints ADD COLUMN shifted boolean NOT NULL DEFAULT false;  -- the list moved under the pass
UPDATE sync_checkpoints SET pass_kind = NULL WHERE pass_kind IS NOT NULL;

-- What being exact cost a run: points spent on rows read twice, pages asked again, and the end-of-pass checks
-- (count, listing, re-reads of rows about to be marked deleted); and how many such rows were found alive.
ALTER TABLE sync_runs ADD COLUMN overhead_points bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN rows_confirmed integer NOT NULL DEFAULT 0;

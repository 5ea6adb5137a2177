-- Whether the full pass in progress records the ids it sees. A full pass that starts with no live rows of the
-- account in the stream's table (a first backfill, the largest pass there is) has nothing to sweep at its end, so it
-- records none: every live row at its end is one it landed.
ALTER TABLE sync_checkpoints ADD COLUMN tracks_seen boolean NOT NULL DEFAULT true;

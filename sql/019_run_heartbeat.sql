-- A run's process says it is alive every 15 s (Runs.beat); `status` shows a run whose heartbeat stopped as interrupted,
-- not running: its process is gone (killed, or the database went away under it), and the next run of the account
-- closes it. NULL for runs recorded before this column, and on the embedded database (one process owns it).
ALTER TABLE sync_runs ADD COLUMN heartbeat_at timestamptz;
COMMENT ON COLUMN sync_runs.heartbeat_at IS 'When the process running it last said it was alive (every 15 s while it runs); a running row whose heartbeat is older than 90 s belongs to a process that is gone.';
-- `status --runs`: the newest runs of every account, found by index however long the history grows.
CREATE INDEX sync_runs_started ON sync_runs (started_at DESC);

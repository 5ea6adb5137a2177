-- `status` shows the latest run of every account and stream: found by index, however long sync_runs grows.
CREATE INDEX sync_runs_account_stream_started ON sync_runs (account_id, stream, started_at DESC);

-- When each stream's last incremental pass started: with change events flowing for an account, `sync` runs a
-- stream's incremental pass only every SYNC_INCREMENTAL_EVERY_WITH_EVENTS (the events keep it fresh meanwhile).
ALTER TABLE sync_checkpoints ADD COLUMN last_incremental_pass_at timestamptz;
-- Whether a stream's events flow for an account: its latest event, found from the newest back.
CREATE INDEX webhook_events_account_received ON webhook_events (account_id, received_at DESC);

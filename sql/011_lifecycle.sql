-- When each stream's data of an account was last known current: the start of its last successful pass, or the read
-- of its last applied change events. Not `synced_at`, which moves only when a row changes (a quiet account looks
-- stale by it). Existing streams start at their last finished pass.
ALTER TABLE sync_checkpoints ADD COLUMN data_current_at timestamptz;
UPDATE sync_checkpoints SET data_current_at = GREATEST(last_full_pass_at, last_incremental_pass_at);

-- For dbt's source freshness (config/dbt/sources.yml): per stream, the time up to which every active account's data
-- is known current (the stalest account decides; one that never finished a pass counts from when it connected).
-- security_invoker: read with the reader's own row-level security (grant-reader), not the view owner's.
CREATE VIEW stream_freshness WITH (security_invoker = true) AS
SELECT s.stream,
       min(COALESCE(k.data_current_at, c.connected_at)) AS data_current_at,
       count(*)::int AS accounts
FROM connections c
CROSS JOIN (SELECT DISTINCT stream FROM sync_checkpoints) s
LEFT JOIN sync_checkpoints k ON k.account_id = c.account_id AND k.stream = s.stream
WHERE c.status = 'active'
GROUP BY s.stream;

-- What the service answered to the API version we ask for (SERVICE_GRAPHQL_VERSION): the version that answered
-- (another one when ours was removed) and the deprecation warning it carried, as of the latest change.
CREATE TABLE api_versions (
  requested       text PRIMARY KEY,
  answered        text NOT NULL,
  answered_since  timestamptz NOT NULL,
  warning         text,
  warned_since    timestamptz,
  observed_at     timestamptz NOT NULL
);

-- Each account's run outcomes in a row (alerts: an account that failed twice in a row).
CREATE TABLE account_health (
  account_id         text PRIMARY KEY,
  last_outcome       text NOT NULL,
  failures_in_a_row  integer NOT NULL DEFAULT 0,
  last_error         text,
  updated_at         timestamptz NOT NULL
);

-- Conditions sent to ALERT_WEBHOOK_URL, one row while each holds (so it is sent once, and again after it cleared).
-- account_id is '' for conditions of the whole installation (the API version).
CREATE TABLE alert_notices (
  account_id    text NOT NULL,
  condition     text NOT NULL,
  detail        text NOT NULL,
  raised_at     timestamptz NOT NULL,
  attempted_at  timestamptz,
  notified_at   timestamptz,
  PRIMARY KEY (account_id, condition)
);

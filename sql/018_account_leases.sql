-- Who may write an account now: one lease per account, owned by src/sync/AccountLeases.ts (no other module writes it).
-- A holder takes the lease when it has lapsed (expires_at passed: its holder stopped renewing it) or when the session
-- that renews it is gone (its process died or lost it), and bumps `epoch`, the fencing token: every write of a run
-- (a page statement, a checkpoint, a sync_runs row) checks in its own transaction that the epoch it took is still the
-- account's, with a key-share lock on this row that the next holder's bump waits for, and writes nothing otherwise.
-- A paused or partitioned process keeps its sessions open; its lease lapses all the same and moves.
-- Only the app role may write it (row locks need UPDATE): a reader can neither take an account nor hold one up.
CREATE TABLE account_leases (
  account_id     text PRIMARY KEY,
  epoch          bigint NOT NULL,
  holder         text NOT NULL,
  holder_pid     int,
  holder_started timestamptz,
  instance       text NOT NULL,
  acquired_at    timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);
COMMENT ON TABLE account_leases IS 'Who may write each account now: a lease with an expiry its holder renews and an epoch (fencing token) each new holder bumps; every write of a run checks the epoch.';
COMMENT ON COLUMN account_leases.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN account_leases.epoch IS 'The fencing token: bumped by each new holder; a write under another epoch writes nothing.';
COMMENT ON COLUMN account_leases.holder IS 'Who holds it, as status and a refused run name it: the holder''s application_name and backend pid.';
COMMENT ON COLUMN account_leases.holder_pid IS 'The backend pid of the session renewing the lease (null on the embedded database): once that session ends the lease is free.';
COMMENT ON COLUMN account_leases.holder_started IS 'When that session started (a pid alone may be reused).';
COMMENT ON COLUMN account_leases.instance IS 'The holding process (one start of it): on the embedded database, a lease of another start is a dead process''s.';
COMMENT ON COLUMN account_leases.acquired_at IS 'When the current holder took it.';
COMMENT ON COLUMN account_leases.expires_at IS 'When it lapses unless renewed (-infinity once released).';

ALTER TABLE sync_runs ADD COLUMN lease_epoch bigint;
COMMENT ON COLUMN sync_runs.lease_epoch IS 'The epoch of the account''s lease the run was started under: a run still running under an older epoch was abandoned.';

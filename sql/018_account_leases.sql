-- Who may write an account now: one lease per account, owned by src/sync/AccountLeases.ts (no other module writes it).
-- A holder takes the lease when it has lapsed (expires_at passed: its holder stopped renewing it) or when the session
-- that holds it is gone (its process died or lost it), and bumps `epoch`, the fencing token: every write of a run
-- (a page statement, a checkpoint, a sync_runs row) checks in its own transaction that the epoch it took is still the
-- account's, with a key-share lock on this row that the next holder's bump waits for, and writes nothing otherwise.
-- A paused or partitioned process keeps its sessions open; its lease lapses all the same and moves.
-- Only the app role may write it (row locks need UPDATE): a reader can neither take an account nor hold one up.
CREATE TABLE account_leases (
  account_id     text PRIMARY KEY,
  epoch          bigint NOT NULL,
  -- who holds it, as `status` and a refused run name it: the holder's application_name and backend pid
  holder         text NOT NULL,
  -- the session renewing it (null on the embedded database, one session for everything)
  holder_pid     int,
  holder_started timestamptz,
  -- the holding process (one start of it): on the embedded database, a lease of another start is a dead process's
  instance       text NOT NULL,
  acquired_at    timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);

-- The epoch of the lease a run was started under: a run still `running` under an older epoch was abandoned.
ALTER TABLE sync_runs ADD COLUMN lease_epoch bigint;

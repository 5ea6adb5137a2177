-- Where each account's stream stands: the cursor of the last committed page of the pass in progress.
CREATE TABLE sync_checkpoints (
  account_id        text NOT NULL,
  stream            text NOT NULL,
  pass_kind         text,                -- 'full' | 'incremental' while a pass is in progress
  cursor            text,                -- endCursor of the last committed page; null at the start of a pass
  pass_started_at   timestamptz,
  high_water_mark   timestamptz,         -- newest updatedAt landed, for incremental passes
  last_full_pass_at timestamptz,         -- when the last full pass completed
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, stream)
);

CREATE TABLE sync_runs (
  id                bigserial PRIMARY KEY,
  account_id        text NOT NULL,
  stream            text NOT NULL,
  kind              text NOT NULL,       -- 'full' | 'incremental'
  started_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz,
  outcome           text NOT NULL DEFAULT 'running'
                    CHECK (outcome IN ('running', 'succeeded', 'failed', 'revoked', 'interrupted', 'skipped')),
  pages             integer NOT NULL DEFAULT 0,
  rows              integer NOT NULL DEFAULT 0,
  cost_points       bigint NOT NULL DEFAULT 0,
  throttle_wait_ms  bigint NOT NULL DEFAULT 0,
  throttled         integer NOT NULL DEFAULT 0,
  error             text
);
CREATE INDEX sync_runs_account_started ON sync_runs (account_id, started_at DESC);

-- One row per job and account. Mapped scalar fields, plus the whole node as `raw`.
CREATE TABLE jobs (
  account_id                         text NOT NULL,
  id                                 text NOT NULL,
  job_number                         integer NOT NULL,
  title                              text,
  job_status                         text NOT NULL,
  job_type                           text NOT NULL,
  billing_type                       text,
  source                             text,
  instructions                       text,
  default_visit_title                text,
  total                              numeric,
  invoiced_total                     numeric,
  uninvoiced_total                   numeric,
  ready_to_close                     boolean,
  start_at                           timestamptz,
  end_at                             timestamptz,
  completed_at                       timestamptz,
  created_at                         timestamptz NOT NULL,
  updated_at                         timestamptz NOT NULL,
  raw                                jsonb NOT NULL,
  first_seen_at                      timestamptz NOT NULL DEFAULT now(),
  synced_at                          timestamptz NOT NULL DEFAULT now(),
  deleted_at                         timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX jobs_account_synced ON jobs (account_id, synced_at);

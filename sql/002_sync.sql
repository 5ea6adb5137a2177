-- Where each account's stream stands. A full pass resumes from `cursor` (the endCursor of its last committed
-- page); an incremental pass always starts from the top and only moves `high_water_mark` when it ends.
CREATE TABLE sync_checkpoints (
  account_id        text NOT NULL,
  stream            text NOT NULL,
  pass_kind         text CHECK (pass_kind IN ('full', 'incremental')),  -- while a pass is in progress
  cursor            text,                -- endCursor of the last committed page of the pass in progress
  pass_started_at   timestamptz,
  high_water_mark   timestamptz,         -- newest updatedAt landed (service time), for incremental passes
  last_full_pass_at timestamptz,         -- when the last completed full pass started
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, stream)
);

-- Ids seen by the full pass in progress, written with each page: the end-of-pass sweep marks every other row
-- deleted without rewriting unchanged rows of the stream's table. Emptied when the pass ends or restarts.
CREATE TABLE sync_pass_seen (
  account_id  text NOT NULL,
  stream      text NOT NULL,
  id          text NOT NULL,
  PRIMARY KEY (account_id, stream, id)
);

CREATE TABLE sync_runs (
  id                bigserial PRIMARY KEY,
  account_id        text NOT NULL,
  stream            text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('full', 'incremental')),
  started_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz,
  outcome           text NOT NULL DEFAULT 'running'
                    CHECK (outcome IN ('running', 'succeeded', 'failed', 'revoked', 'interrupted', 'skipped')),
  pages             integer NOT NULL DEFAULT 0,
  rows              integer NOT NULL DEFAULT 0,   -- rows received
  rows_written      integer NOT NULL DEFAULT 0,   -- rows inserted or changed
  rows_deleted      integer NOT NULL DEFAULT 0,   -- rows marked deleted by the full pass sweep
  cost_points       bigint NOT NULL DEFAULT 0,
  throttle_wait_ms  bigint NOT NULL DEFAULT 0,
  throttled         integer NOT NULL DEFAULT 0,
  error             text
);
CREATE INDEX sync_runs_account_started ON sync_runs (account_id, started_at DESC);

-- One row per job and account: every scalar field of the schema's `Job`, plus the whole node as `raw`.
-- Strings are stored with NUL characters replaced by U+FFFD (Postgres text cannot hold NUL); `raw` spells a NUL
-- as the six characters \u0000 instead, so the row is kept and the original is recoverable.
-- synced_at: when the row's content last changed here; an unchanged row is not rewritten.
CREATE TABLE jobs (
  account_id                             text NOT NULL,
  id                                     text NOT NULL,
  job_number                             integer NOT NULL,
  title                                  text,
  job_status                             text NOT NULL,
  job_type                               text NOT NULL,
  billing_type                           text NOT NULL,
  source                                 text NOT NULL,
  instructions                           text,
  default_visit_title                    text NOT NULL,
  jobber_web_uri                         text NOT NULL,
  total                                  double precision NOT NULL,
  invoiced_total                         double precision NOT NULL,
  uninvoiced_total                       double precision NOT NULL,
  completed_and_uninvoiced_visits_count  integer NOT NULL,
  completed_and_uninvoiced_visits_total  double precision NOT NULL,
  ready_to_close                         boolean NOT NULL,
  allow_review_request                   boolean NOT NULL,
  visit_generation_in_progress           boolean NOT NULL,
  visit_rescheduling_in_progress         boolean NOT NULL,
  will_client_be_automatically_charged   boolean,
  start_at                               timestamptz,
  end_at                                 timestamptz,
  completed_at                           timestamptz,
  booking_confirmation_sent_at           timestamptz,
  next_date_to_send_review_sms           timestamptz,
  pending_invoice_starts_at              timestamptz,
  created_at                             timestamptz NOT NULL,
  updated_at                             timestamptz NOT NULL,
  raw                                    jsonb NOT NULL,
  first_seen_at                          timestamptz NOT NULL DEFAULT now(),
  synced_at                              timestamptz NOT NULL DEFAULT now(),
  deleted_at                             timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX jobs_account_updated ON jobs (account_id, updated_at DESC);

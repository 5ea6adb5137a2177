-- Webhook deliveries become a queue of change events (src/sync/events): each delivery is recorded once (its
-- event_id is the hash of what it says, so a redelivery is the same row), matched to a connected account whatever
-- encoding its account id uses, and applied by the consumer (records read again by id and landed, or marked deleted).
ALTER TABLE webhook_events
  ADD COLUMN app_id text,
  ADD COLUMN item_id text,
  ADD COLUMN sent_account_id text,          -- the account id as the delivery spelled it (account_id: the connection it matched)
  ADD COLUMN state text NOT NULL DEFAULT 'applied'
    CHECK (state IN ('pending', 'applied', 'failed', 'unmatched', 'ignored', 'deferred')),
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz,   -- a pending event is not applied before (its second closed; a retry's backoff)
  ADD COLUMN applied_at timestamptz,
  ADD COLUMN error text;
UPDATE webhook_events SET sent_account_id = account_id, applied_at = received_at;
CREATE INDEX webhook_events_waiting ON webhook_events (account_id, next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_events_applied ON webhook_events (account_id, applied_at DESC) WHERE state = 'applied';

-- A change event the consumer could not read again (a new record of a collection it cannot look up by id) asks for
-- the stream's next full pass: `sync` runs one when this is later than the last full pass.
ALTER TABLE sync_checkpoints ADD COLUMN full_pass_requested_at timestamptz;

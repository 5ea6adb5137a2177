-- Connected accounts and their lifecycle: active -> revoked | disconnected -> active (reconnect).
CREATE TABLE connections (
  account_id     text PRIMARY KEY,
  account_name   text NOT NULL,
  status         text NOT NULL CHECK (status IN ('active', 'revoked', 'disconnected')),
  status_reason  text,
  scopes         text,
  connected_at   timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Tokens, encrypted with AES-256-GCM (iv || tag || ciphertext). `version` grows on every write, so a
-- process that lost a refresh race can tell that the stored token changed under it.
CREATE TABLE oauth_tokens (
  account_id         text PRIMARY KEY REFERENCES connections (account_id) ON DELETE CASCADE,
  access_token       bytea NOT NULL,
  refresh_token      bytea,
  access_expires_at  timestamptz NOT NULL,
  version            bigint NOT NULL DEFAULT 1,
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- Authorization flows begun by `serve` (/oauth/start), so a callback can land on any replica or after a restart.
CREATE TABLE oauth_pending (
  state          text PRIMARY KEY,
  code_verifier  bytea,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);

-- Idempotency record of webhook deliveries.
CREATE TABLE webhook_events (
  event_id     text PRIMARY KEY,
  topic        text NOT NULL,
  account_id   text,
  occurred_at  timestamptz,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_pending_expires ON oauth_pending (expires_at);

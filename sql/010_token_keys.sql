-- The token key check: the id of the key the stored tokens are written under and a check value (HMAC-SHA256 of a
-- constant under that key; never the key). Recorded at the first start; a process whose TOKEN_ENCRYPTION_KEY is
-- neither this key nor lists it in TOKEN_ENCRYPTION_OLD_KEYS refuses to start. A rotation replaces the row.
CREATE TABLE token_keys (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  key_id       text NOT NULL,
  check_value  bytea NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now()
);

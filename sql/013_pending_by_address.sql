-- Pending authorization flows are capped per client address (OAUTH_PENDING_PER_ADDRESS), not only all together
-- (OAUTH_PENDING_MAX): a few dozen addresses can no longer fill the one pool and lock every visitor out.
ALTER TABLE oauth_pending ADD COLUMN client_address text;
CREATE INDEX oauth_pending_by_address ON oauth_pending (client_address);

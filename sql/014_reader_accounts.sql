-- Per-account read access: which accounts each reader role may read (`account-sync grant-reader`). Every table with an
-- account_id has row-level security, forced on its owner too, with two policies (src/db/rowSecurity.ts keeps them
-- after every migration, so a new stream's tables are covered): the owner (the app role) and <schema>_query see every
-- row; any other role sees the rows of the accounts listed here for it, and nothing else.
CREATE TABLE reader_accounts (
  role_name   text NOT NULL,
  account_id  text NOT NULL,
  granted_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (role_name, account_id)
);

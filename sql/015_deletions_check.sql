-- What the last full pass of a stream could say about deletions. deletions_unchecked: why it marked nothing deleted
-- (the listing its sweep needed was incomplete), NULL when it checked them. rows_withheld: rows the service counts but
-- did not list (it leaves some out of its pages), by the last complete listing; shown by `status`.
ALTER TABLE sync_checkpoints ADD COLUMN deletions_unchecked text;
ALTER TABLE sync_checkpoints ADD COLUMN rows_withheld integer;

-- History mode (SYNC_HISTORY): beside each stream table and each line item table, `<table>_history` holds every
-- version of a row: its columns (not raw, synced_at or deleted_at), valid_from, valid_to (null while current) and how
-- the version ended (updated, deleted). The versions are written by two statement-level triggers on the current
-- table (after INSERT and after UPDATE, over the statement's new rows), so in the same transaction as the current row
-- whatever wrote it: a page, an incremental pass, a change event, a full pass's sweep, a destroy event, a line item
-- its parent no longer has. The triggers exist only while history is on for the table (history_enable and
-- history_disable, called by the program at start from SYNC_HISTORY): with history off a write costs nothing more.
--
-- A version starts at the row's updatedAt (the service's time of the change), or, for a table without updated_at,
-- at the time the row was read (the transaction's); never before the row's latest version. It is written only when a
-- tracked column changes (every column but the key, raw, synced_at, deleted_at, updated_at and first_seen_at): a re-read of an
-- unchanged row, a replayed event, a retried page write nothing. An older read never lands over a newer row (the
-- page statement's stale guard), so versions follow the service's order, not arrival order. A row found gone closes
-- its version (valid_to = the time it was marked deleted, ended_by = deleted); a row that comes back opens one.
-- A new stream table's migration calls history_install('<table>') once.

CREATE TABLE history_tables (
  table_name text PRIMARY KEY,
  stream text NOT NULL,
  since timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE history_tables IS 'The tables whose history is kept (SYNC_HISTORY), with the stream they belong to and since when; history starts at the rows current at that time.';

-- The statements that bring `<source>_history` up to date with the rows of `input` (the trigger's new rows, or the
-- whole table when history is turned on): rows marked deleted close their open version; live rows whose tracked
-- columns differ from their open version (or that have none) close it, then open a new one (two statements: the
-- parts of one statement see one snapshot, and the new version must not meet the open one in the unique index).
CREATE FUNCTION history_statements(source text, input text) RETURNS text LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  history text := source || '_history';
  keys text[];
  tracked text[];
  has_updated boolean;
  kept text[];
  key_match text;
  stored text;
  valid_from text;
  changed text;
BEGIN
  SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum)) INTO keys
  FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
  WHERE i.indrelid = source::regclass AND i.indisprimary;
  SELECT array_agg(a.attname::text ORDER BY a.attnum) INTO tracked
  FROM pg_attribute a
  WHERE a.attrelid = source::regclass AND a.attnum > 0 AND NOT a.attisdropped
    AND a.attname <> ALL (keys || ARRAY['raw', 'synced_at', 'deleted_at', 'updated_at', 'first_seen_at']::name[]);
  has_updated := EXISTS (SELECT FROM pg_attribute WHERE attrelid = source::regclass AND attname = 'updated_at' AND NOT attisdropped);
  -- kept in each version, never compared: when the service last touched the row, when we first saw it
  SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), ARRAY[]::text[]) INTO kept
  FROM pg_attribute a
  WHERE a.attrelid = source::regclass AND a.attname IN ('updated_at', 'first_seen_at') AND NOT a.attisdropped;
  SELECT string_agg(format('h.%1$I = n.%1$I', k), ' AND ') INTO key_match FROM unnest(keys) AS k;
  SELECT string_agg(format('%I', c), ', ') INTO stored
  FROM unnest(keys || tracked || kept) AS c;
  valid_from := CASE WHEN has_updated THEN 'COALESCE(n.updated_at, now())' ELSE 'now()' END;
  -- the live rows whose tracked columns differ from their open version, or that have none, with the new version's
  -- start (the first statement below closes the open versions they differ from, the second opens theirs). The open
  -- version is looked up row by row (LATERAL, by key): as an anti-join, a planner without statistics on the history
  -- table scanned all of its open versions for each row (quadratic: a backfill of 100,000 jobs stalled near 50,000)
  changed := format($c$SELECT n.*, GREATEST(%4$s, (SELECT max(h.valid_from) FROM %1$I AS h WHERE %3$s)) AS version_from
      FROM %2$s AS n
      LEFT JOIN LATERAL (SELECT * FROM %1$I AS h WHERE %3$s AND h.valid_to IS NULL LIMIT 1) AS o ON true
      WHERE n.deleted_at IS NULL AND (o.valid_from IS NULL OR (%5$s) IS DISTINCT FROM (%6$s))$c$,
    history, input, key_match, valid_from,
    (SELECT string_agg(format('o.%I', c), ', ') FROM unnest(tracked) AS c),
    (SELECT string_agg(format('n.%I', c), ', ') FROM unnest(tracked) AS c));
  RETURN format($s$
    UPDATE %1$I AS h SET valid_to = GREATEST(n.deleted_at, h.valid_from), ended_by = 'deleted'
    FROM (SELECT n.*, o.valid_from AS open_from FROM %2$s AS n
          JOIN LATERAL (SELECT h.valid_from FROM %1$I AS h WHERE %3$s AND h.valid_to IS NULL LIMIT 1) AS o ON true
          WHERE n.deleted_at IS NOT NULL) AS n
    WHERE %3$s AND h.valid_from = n.open_from;
    UPDATE %1$I AS h SET valid_to = n.version_from, ended_by = 'updated'
    FROM (%4$s) AS n
    WHERE %3$s AND h.valid_from < n.version_from AND (h.valid_to IS NULL OR h.valid_to > n.version_from);
    INSERT INTO %1$I AS h (%5$s, valid_from) SELECT %5$s, version_from FROM (%4$s) AS n
    ON CONFLICT (%6$s, valid_from) DO UPDATE SET %7$s, valid_to = NULL, ended_by = NULL, recorded_at = now();
  $s$,
    history, input, key_match, changed, stored,
    (SELECT string_agg(format('%I', k), ', ') FROM unnest(keys) AS k),
    (SELECT string_agg(format('%1$I = EXCLUDED.%1$I', c), ', ') FROM unnest(tracked || kept) AS c));
END
$fn$;

-- `<source>_history` (the current table's columns less raw, synced_at and deleted_at, and the version's), and the
-- trigger function that keeps it (not yet attached: history_enable does).
CREATE FUNCTION history_install(source text) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  history text := source || '_history';
  keys text;
BEGIN
  SELECT string_agg(format('%I', a.attname), ', ' ORDER BY array_position(i.indkey::int2[], a.attnum)) INTO keys
  FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
  WHERE i.indrelid = source::regclass AND i.indisprimary;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING COMMENTS)', history, source);
  EXECUTE format($s$ALTER TABLE %I DROP COLUMN raw, DROP COLUMN synced_at, DROP COLUMN deleted_at,
    ADD COLUMN valid_from timestamptz NOT NULL,
    ADD COLUMN valid_to timestamptz,
    ADD COLUMN ended_by text CHECK (ended_by IN ('updated', 'deleted')),
    ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now(),
    ADD PRIMARY KEY (%s, valid_from)$s$, history, keys);
  EXECUTE format('CREATE UNIQUE INDEX %I ON %I (%s) WHERE valid_to IS NULL', history || '_current', history, keys);
  EXECUTE format('COMMENT ON TABLE %I IS %L', history,
    format('Every version of the rows of %s while its history is kept (SYNC_HISTORY): one row per version, current while valid_to is null.', source));
  EXECUTE format('COMMENT ON COLUMN %I.valid_from IS %L', history,
    'When this version began: the row''s updatedAt on the service, or, for a table without updated_at, when the row was read.');
  EXECUTE format('COMMENT ON COLUMN %I.valid_to IS %L', history, 'When this version ended; null while it is the current one.');
  EXECUTE format('COMMENT ON COLUMN %I.ended_by IS %L', history,
    'How this version ended: updated (a later version follows from valid_to) or deleted (the row was found gone at valid_to); null while current.');
  EXECUTE format('COMMENT ON COLUMN %I.recorded_at IS %L', history, 'When this version was written here.');
  EXECUTE format($s$CREATE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $t$
    BEGIN
      %s
      RETURN NULL;
    END $t$$s$, history || '_track', history_statements(source, 'new_rows'));
END
$fn$;

-- History on for `source` (a table of `stream`): its current rows become its open versions (rows deleted meanwhile
-- close theirs), then the triggers keep it. Idempotent.
CREATE FUNCTION history_enable(source text, stream text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF EXISTS (SELECT FROM history_tables WHERE table_name = source) THEN RETURN; END IF;
  EXECUTE history_statements(source, format('%I', source));
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %I()',
    source || '_history_on_insert', source, source || '_history_track');
  EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %I()',
    source || '_history_on_update', source, source || '_history_track');
  INSERT INTO history_tables (table_name, stream) VALUES (source, stream);
END
$fn$;

-- History off for `source`: the triggers go, the versions stay (turned on again, history restarts at the rows then
-- current: what changed meanwhile is not known).
CREATE FUNCTION history_disable(source text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', source || '_history_on_insert', source);
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', source || '_history_on_update', source);
  DELETE FROM history_tables WHERE table_name = source;
END
$fn$;

SELECT history_install(t) FROM unnest(ARRAY[
  'users', 'products', 'clients', 'properties', 'requests', 'request_line_items', 'quotes', 'quote_line_items',
  'jobs', 'job_line_items', 'visits', 'visit_line_items', 'invoices', 'invoice_line_items'
]) AS t;

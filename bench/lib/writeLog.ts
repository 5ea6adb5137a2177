import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A write log kept by Postgres itself, installed by chaos in its own schema (not a product migration): every statement
 * that writes the warehouse, the checkpoints, the seen ids or `sync_runs` leaves a row per account it wrote, with the
 * writing session (application_name: a worker's sessions carry its host:pid; backend pid and start), its transaction
 * id and the time; every change of an account's lease epoch leaves a row with the taking session and the snapshot it
 * took the lease under. The product's own records (sync_runs, the leases) are not asked who wrote what.
 *
 * A write is a fenced worker's when, at its commit, the account's lease was another process's: the latest take of the
 * lease whose snapshot does not see the write's transaction (the write committed after it) is not the writer's.
 * Snapshots, not clocks: a take waits for the key-share locks of the writes that checked the old epoch, so its
 * snapshot sees every write made under the old epoch and none made after it.
 */

/** Tables of an account's data and run records: every table of the schema with an account_id, but these. */
const notLogged = [
  "connections",
  "oauth_tokens",
  "oauth_pending",
  "webhook_events",
  "token_keys",
  "api_versions",
  "account_health",
  "alert_notices",
  "reader_accounts",
  "history_tables",
  "account_leases"
]

export const installWriteLog = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`
      CREATE TABLE ${schema}.chaos_write_log (
        n bigserial PRIMARY KEY, tbl text NOT NULL, op text NOT NULL, account_id text NOT NULL, rows int NOT NULL,
        writer text NOT NULL, writer_pid int NOT NULL, writer_started timestamptz, txid xid8 NOT NULL, at timestamptz NOT NULL);
      CREATE TABLE ${schema}.chaos_lease_log (
        n bigserial PRIMARY KEY, account_id text NOT NULL, epoch bigint NOT NULL, holder text NOT NULL, holder_pid int NOT NULL,
        snapshot pg_snapshot NOT NULL, at timestamptz NOT NULL);
      CREATE FUNCTION ${schema}.chaos_log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO ${schema}.chaos_write_log (tbl, op, account_id, rows, writer, writer_pid, writer_started, txid, at)
        SELECT TG_TABLE_NAME, TG_OP, c.account_id, count(*), current_setting('application_name'), pg_backend_pid(),
          (SELECT backend_start FROM pg_stat_get_activity(pg_backend_pid())), pg_current_xact_id(), clock_timestamp()
        FROM changed c GROUP BY c.account_id;
        RETURN NULL; END $$;
      -- a skipped run's row (its account held elsewhere) is a record of the refusal, written by design outside the lease
      CREATE FUNCTION ${schema}.chaos_log_run_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO ${schema}.chaos_write_log (tbl, op, account_id, rows, writer, writer_pid, writer_started, txid, at)
        SELECT TG_TABLE_NAME, TG_OP, c.account_id, count(*), current_setting('application_name'), pg_backend_pid(),
          (SELECT backend_start FROM pg_stat_get_activity(pg_backend_pid())), pg_current_xact_id(), clock_timestamp()
        FROM changed c WHERE NOT (TG_OP = 'INSERT' AND c.outcome = 'skipped') GROUP BY c.account_id;
        RETURN NULL; END $$;
      CREATE FUNCTION ${schema}.chaos_log_lease() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO ${schema}.chaos_lease_log (account_id, epoch, holder, holder_pid, snapshot, at)
        VALUES (NEW.account_id, NEW.epoch, current_setting('application_name'), pg_backend_pid(), pg_current_snapshot(), clock_timestamp());
        RETURN NULL; END $$;
      CREATE TRIGGER chaos_log_lease AFTER INSERT ON ${schema}.account_leases FOR EACH ROW EXECUTE FUNCTION ${schema}.chaos_log_lease();
      CREATE TRIGGER chaos_log_lease_taken AFTER UPDATE ON ${schema}.account_leases FOR EACH ROW
        WHEN (NEW.epoch IS DISTINCT FROM OLD.epoch) EXECUTE FUNCTION ${schema}.chaos_log_lease();`)
    const tables = yield* sql<{ table_name: string }>`
      SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = ${schema} AND c.column_name = 'account_id' AND t.table_type = 'BASE TABLE'
        AND c.table_name NOT IN ${sql.in(notLogged)} AND c.table_name NOT LIKE 'chaos\\_%'
      ORDER BY 1`
    // transition tables allow one event per trigger
    const statements = tables.flatMap(({ table_name: t }) => {
      const fn = t === "sync_runs" ? "chaos_log_run_write" : "chaos_log_write"
      return [
        ["INSERT", "NEW"],
        ["UPDATE", "NEW"],
        ["DELETE", "OLD"]
      ].map(([op, side]) =>
        `CREATE TRIGGER chaos_log_${op!.toLowerCase()} AFTER ${op} ON ${schema}.${t} REFERENCING ${side} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.${fn}();`
      )
    })
    yield* sql.unsafe(statements.join("\n"))
    return tables.map((t) => t.table_name)
  })

export interface FencedWrites {
  /** Logged write statements (one row per statement and account). */
  readonly writes: number
  /** Lease takes logged (epoch changes). */
  readonly takes: number
  /** Writes committed while another process held the account's lease. */
  readonly fenced: number
  /** Writes of an account whose lease no one had taken before they committed. */
  readonly unleased: number
  readonly examples: ReadonlyArray<string>
}

/** The writes whose writer was not the account's lease holder when they committed (see the module's comment). */
export const countFencedWrites = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number; tbl: string; op: string; account_id: string; writer: string; holder: string | null; epoch: string | null; at: Date }>`
    SELECT w.n, w.tbl, w.op, w.account_id, w.writer, h.holder, h.epoch::text AS epoch, w.at
    FROM chaos_write_log w
    LEFT JOIN LATERAL (
      SELECT l.holder, l.epoch FROM chaos_lease_log l
      WHERE l.account_id = w.account_id AND NOT pg_visible_in_snapshot(w.txid, l.snapshot)
      ORDER BY l.epoch DESC LIMIT 1) h ON true
    WHERE h.holder IS DISTINCT FROM w.writer
    ORDER BY w.n`
  const [totals] = yield* sql<{ writes: number; takes: number }>`
    SELECT (SELECT count(*) FROM chaos_write_log)::int AS writes, (SELECT count(*) FROM chaos_lease_log)::int AS takes`
  return {
    writes: totals!.writes,
    takes: totals!.takes,
    fenced: rows.filter((r) => r.holder !== null).length,
    unleased: rows.filter((r) => r.holder === null).length,
    examples: rows
      .slice(0, 5)
      .map((r) => `${r.op} ${r.tbl} of ${r.account_id} by ${r.writer} at ${new Date(r.at).toISOString()} while ${r.holder === null ? "no one" : `${r.holder} (epoch ${r.epoch})`} held it`)
  } satisfies FencedWrites
})

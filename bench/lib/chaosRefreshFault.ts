import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const childSessionName = "account-sync-chaos-child"

/**
 * The refresh-commit fault: every `every`-th update of a token row by a connector child kills its own backend at
 * COMMIT (a deferred constraint trigger), so the rotated refresh token the service already issued meets a lost session.
 */
export const installRefreshCommitFault = (every: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`
      CREATE SEQUENCE IF NOT EXISTS chaos_token_commits;
      CREATE TABLE IF NOT EXISTS chaos_refresh_commit_fault (on_ boolean NOT NULL);
      INSERT INTO chaos_refresh_commit_fault SELECT false WHERE NOT EXISTS (SELECT 1 FROM chaos_refresh_commit_fault);
      CREATE OR REPLACE FUNCTION chaos_kill_token_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE n bigint;
      BEGIN
        IF current_setting('application_name') NOT LIKE '${childSessionName}%' OR NOT (SELECT on_ FROM chaos_refresh_commit_fault) THEN RETURN NULL; END IF;
        n := nextval('chaos_token_commits');
        IF n % ${every} = 1 THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
          PERFORM pg_sleep(10);
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER IF EXISTS chaos_kill_token_commit ON oauth_tokens;
      CREATE CONSTRAINT TRIGGER chaos_kill_token_commit AFTER UPDATE ON oauth_tokens
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chaos_kill_token_commit();`)
  })

export const setRefreshCommitFault = (on: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE chaos_refresh_commit_fault SET on_ = ${on}`)

/** Kills so far: of the token commits the sequence counted (a sequence is not rolled back), those whose turn was a kill. */
export const refreshCommitFaultsInjected = (every: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: string | null }>`SELECT CASE WHEN is_called THEN last_value END AS n FROM chaos_token_commits`
    const commits = Number(rows[0]?.n ?? 0)
    return commits === 0 ? 0 : Math.floor((commits - 1) / every) + 1
  })

import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { Connections } from "../../../src/auth/Connections.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { embeddedTestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * The moment a refresh's rotated token is to be committed, its backend is terminated: a deferred constraint trigger
 * on `oauth_tokens` runs at COMMIT and, the first time only (a sequence is not rolled back), terminates its own
 * session. The service has already replaced the refresh token, so the new one exists only in the connector's memory.
 */
const killFirstTokenCommit = `
  CREATE SEQUENCE token_commits;
  CREATE FUNCTION kill_first_token_commit() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF nextval('token_commits') = 1 THEN
      PERFORM pg_terminate_backend(pg_backend_pid());
      PERFORM pg_sleep(10);
    END IF;
    RETURN NULL;
  END $$;
  CREATE CONSTRAINT TRIGGER kill_first_token_commit AFTER UPDATE ON oauth_tokens
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION kill_first_token_commit();`

// terminating a backend needs a real Postgres (the embedded one is a single session)
describe.skipIf(embeddedTestDatabase())("a rotated refresh token and a lost database session", () => {
  layer(syncHarness({ accounts: 1, jobs: 30, rotation: true }), { timeout: 60_000, excludeTestServices: true })("refresh commit", (it) => {
    it.effect("the backend is terminated at the refresh's COMMIT: the new token is stored on a new session and the next run uses it", () =>
      Effect.gen(function* () {
        const emulator = yield* TestEmulator
        const { accountId } = emulator.accounts[0]!
        const { clientId } = emulator.app
        const sql = yield* SqlClient.SqlClient
        const tokens = yield* AccessTokens
        const store = yield* TokenStore
        const refreshes = Effect.map(emulator.admin.stats(), (s) => s.refreshesByAccount[accountId] ?? 0)
        yield* connectAccount(accountId)
        const before = Option.getOrThrow(yield* store.read(accountId))
        expect(yield* emulator.admin.liveRefreshTokens({ clientId, accountId })).toBe(1)

        yield* sql.unsafe(killFirstTokenCommit)
        const fresh = yield* tokens.refreshAfterRejection(accountId, before.accessToken)
        // the first COMMIT was killed; the second write (on a new session) went through
        const [commits] = yield* sql<{ n: number }>`SELECT last_value::int AS n FROM token_commits`
        expect(commits!.n).toBe(2)
        expect(yield* refreshes).toBe(1)

        const after = Option.getOrThrow(yield* store.read(accountId))
        expect(Redacted.value(after.accessToken)).toBe(Redacted.value(fresh))
        expect(after.version).toBe(before.version + 1)
        const storedRefresh = Redacted.value(Option.getOrThrow(after.refreshToken))
        expect(storedRefresh).not.toBe(Redacted.value(Option.getOrThrow(before.refreshToken)))
        expect(yield* emulator.admin.isRefreshTokenValid({ clientId, refreshToken: storedRefresh })).toBe(true)
        expect(yield* emulator.admin.liveRefreshTokens({ clientId, accountId })).toBe(1)
        expect(Option.getOrThrow(yield* (yield* Connections).get(accountId)).status).toBe("active")

        // the next run syncs with the new token, and its next refresh (with the stored refresh token) is accepted
        const reports = yield* (yield* SyncRunner).run({ mode: "backfill" })
        expect(reports.map((r) => [r.accountId, r.outcome, r.message])).toEqual([[accountId, "synced", undefined]])
        const next = yield* tokens.refreshAfterRejection(accountId, fresh)
        expect(Redacted.value(next)).not.toBe(Redacted.value(fresh))
        expect(yield* refreshes).toBe(2)
        expect(Option.getOrThrow(yield* (yield* Connections).get(accountId)).status).toBe("active")
        expect(yield* emulator.admin.liveRefreshTokens({ clientId, accountId })).toBe(1)
        const last = Option.getOrThrow(yield* store.read(accountId))
        expect(yield* emulator.admin.isRefreshTokenValid({ clientId, refreshToken: Redacted.value(Option.getOrThrow(last.refreshToken)) })).toBe(true)
      })
    )
  })
})

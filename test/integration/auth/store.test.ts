import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Layer, Option, Redacted, TestClock } from "effect"
import * as crypto from "node:crypto"
import { Connections, ConnectionsLive } from "../../../src/auth/Connections.js"
import { PendingFlows, PendingFlowsLive } from "../../../src/auth/PendingFlows.js"
import { decryptWith, encryptWith, TokenCipherLive } from "../../../src/auth/TokenCipher.js"
import { keyRing } from "../../../src/auth/TokenKey.js"
import type { IssuedTokens } from "../../../src/auth/TokenEndpoint.js"
import { TokenStore, TokenStoreLive } from "../../../src/auth/TokenStore.js"
import { authorizationUrl, codeChallenge, newCodeVerifier } from "../../../src/auth/Authorization.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { offlineEnv } from "../../support/auth.js"
import { withEnv } from "../../support/config.js"
import { authLayerFor } from "../../support/connector.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenKey } from "../../../src/auth/TokenKey.js"
import { AnonymousLimitsLive } from "../../../src/auth/AnonymousLimits.js"

const env = offlineEnv({ OAUTH_PENDING_MAX: "3", OAUTH_PENDING_PER_ADDRESS: "2" })
const settingsLayer = Layer.mergeAll(OAuthClient.layer, TokenKey.layer, AnonymousLimitsLive).pipe(Layer.provide(withEnv(env)))
const Stack = Layer.mergeAll(ConnectionsLive, PendingFlowsLive).pipe(
  Layer.provideMerge(TokenStoreLive),
  Layer.provideMerge(TokenCipherLive),
  Layer.provideMerge(settingsLayer),
  Layer.provideMerge(TestDatabaseLive)
)

const issued = (access: string, refresh: string | undefined, expiresAt = new Date("2030-01-01T00:00:00Z")): IssuedTokens => ({
  accessToken: Redacted.make(access),
  refreshToken: refresh === undefined ? Option.none() : Option.some(Redacted.make(refresh)),
  expiresAt,
  scopes: Option.none()
})

describe("token encryption", () => {
  const key = keyRing(Redacted.make(crypto.randomBytes(32)))
  const other = keyRing(Redacted.make(crypto.randomBytes(32)))

  layer(Layer.empty)((it) => {
    it.effect("round-trips, with a fresh IV per value, and fails plainly under another key or after tampering", () =>
      Effect.gen(function* () {
        const secret = Redacted.make("access-token-value-123")
        const a = encryptWith(key.current, secret)
        const b = encryptWith(key.current, secret)
        expect(a.equals(b)).toBe(false)
        expect(a.includes(Buffer.from("access-token-value-123"))).toBe(false)
        expect(Redacted.value(yield* decryptWith(key, a, "access token of account A"))).toBe("access-token-value-123")

        const wrongKey = yield* Effect.flip(decryptWith(other, a, "access token of account A"))
        expect(wrongKey._tag).toBe("TokenKeyMismatch")
        expect(wrongKey.message).toContain("TOKEN_ENCRYPTION_KEY does not match")
        expect(wrongKey.message).toContain("access token of account A")
        expect(wrongKey.message).toContain(`key id ${key.current.id}`)
        expect(wrongKey.message).not.toContain("access-token-value")

        const tampered = Buffer.from(a)
        tampered[tampered.length - 1]! ^= 1
        expect((yield* Effect.flip(decryptWith(key, tampered, "x")))._tag).toBe("TokenKeyMismatch")
        // the header (format and key id) is authenticated with the value
        const relabelled = Buffer.from(a)
        relabelled[2]! ^= 1
        expect((yield* Effect.flip(decryptWith(key, relabelled, "x")))._tag).toBe("TokenKeyMismatch")
      })
    )

    it.effect("PKCE: an 86-character unreserved verifier and its S256 challenge in the authorization URL", () =>
      Effect.sync(() => {
        const verifier = newCodeVerifier()
        expect(Redacted.value(verifier)).toMatch(/^[A-Za-z0-9\-._~]{43,128}$/)
        expect(Redacted.value(newCodeVerifier())).not.toBe(Redacted.value(verifier))
        const expected = crypto.createHash("sha256").update(Redacted.value(verifier)).digest("base64url")
        expect(codeChallenge(verifier)).toBe(expected)
        const url = new URL(
          authorizationUrl({ baseUrl: "https://svc.example", clientId: "cid", redirectUri: "http://127.0.0.1:1/cb", state: "st", codeVerifier: verifier })
        )
        expect(url.pathname).toBe("/api/oauth/authorize")
        expect(Object.fromEntries(url.searchParams)).toEqual({
          response_type: "code",
          client_id: "cid",
          redirect_uri: "http://127.0.0.1:1/cb",
          state: "st",
          code_challenge: expected,
          code_challenge_method: "S256"
        })
      })
    )
  })
})

layer(Stack)("token store and connections (Postgres)", (it) => {
  it.effect("tokens are stored encrypted: the rows hold neither token, and another key cannot read them", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      const sql = yield* SqlClient.SqlClient
      yield* connections.activate({ accountId: "acc-enc", accountName: "Enc", scopes: ["read_jobs"], tokens: issued("plain-access-AAAA", "plain-refresh-BBBB") })
      const rows = yield* sql<{ access_token: Uint8Array; refresh_token: Uint8Array }>`
        SELECT access_token, refresh_token FROM oauth_tokens WHERE account_id = 'acc-enc'`
      const raw = Buffer.concat([Buffer.from(rows[0]!.access_token), Buffer.from(rows[0]!.refresh_token)])
      expect(raw.includes(Buffer.from("plain-access"))).toBe(false)
      expect(raw.includes(Buffer.from("plain-refresh"))).toBe(false)
      const dump = yield* sql<{ t: string }>`SELECT row_to_json(o)::text AS t FROM oauth_tokens o`
      expect(dump.map((r) => r.t).join()).not.toContain("plain-")

      const otherKey = keyRing(Redacted.make(crypto.randomBytes(32)))
      const failure = yield* Effect.flip(decryptWith(otherKey, rows[0]!.access_token, "access token of account acc-enc"))
      expect(failure._tag).toBe("TokenKeyMismatch")

      const stored = yield* (yield* TokenStore).read("acc-enc")
      expect(Option.map(stored, (s) => Redacted.value(s.accessToken))).toEqual(Option.some("plain-access-AAAA"))
    })
  )

  it.effect("a refresh without a new refresh token keeps the old one; with one, it replaces it; version grows", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      const store = yield* TokenStore
      yield* connections.activate({ accountId: "acc-rot", accountName: "Rot", scopes: [], tokens: issued("a1", "r1") })
      const v1 = Option.getOrThrow(yield* store.read("acc-rot"))
      const afterPlain = yield* store.write("acc-rot", issued("a2", undefined), "refresh")
      expect(Redacted.value(afterPlain.accessToken)).toBe("a2")
      expect(Option.map(afterPlain.refreshToken, Redacted.value)).toEqual(Option.some("r1"))
      expect(afterPlain.version).toBe(v1.version + 1)
      const afterRotation = yield* store.write("acc-rot", issued("a3", "r2"), "refresh")
      expect(Option.map(afterRotation.refreshToken, Redacted.value)).toEqual(Option.some("r2"))
      expect(afterRotation.version).toBe(v1.version + 2)
    })
  )

  it.effect("active -> revoked -> active on reconnect; disconnected deletes the tokens; listActive follows", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      const store = yield* TokenStore
      yield* connections.activate({ accountId: "acc-sm", accountName: "Old name", scopes: ["read_jobs", "read_clients"], tokens: issued("a", "r") })
      expect((yield* connections.list()).filter((c) => c.status === "active").map((c) => c.accountId)).toContain("acc-sm")

      yield* connections.markRevoked("acc-sm", "refresh refused: invalid_grant")
      let c = Option.getOrThrow(yield* connections.get("acc-sm"))
      expect([c.status, c.statusReason]).toEqual(["revoked", "refresh refused: invalid_grant"])
      expect((yield* connections.list()).filter((c) => c.status === "active").map((c) => c.accountId)).not.toContain("acc-sm")

      c = yield* connections.activate({ accountId: "acc-sm", accountName: "New name", scopes: ["read_jobs"], tokens: issued("a2", "r2") })
      expect([c.status, c.statusReason, c.accountName, c.scopes]).toEqual(["active", null, "New name", ["read_jobs"]])
      expect(c.tokenExpiresAt?.toISOString()).toBe("2030-01-01T00:00:00.000Z")

      expect(yield* connections.markDisconnected("acc-sm", "APP_DISCONNECT webhook")).toBe(true)
      c = Option.getOrThrow(yield* connections.get("acc-sm"))
      expect([c.status, c.tokenExpiresAt]).toEqual(["disconnected", null])
      expect(Option.isNone(yield* store.read("acc-sm"))).toBe(true)

      yield* connections.rename("acc-sm", "Renamed")
      expect(Option.getOrThrow(yield* connections.get("acc-sm")).accountName).toBe("Renamed")
    })
  )

  it.effect("after a refresh whose session was lost: only a revocation by a refused refresh since it began is undone", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      const sql = yield* SqlClient.SqlClient
      const restore = (since: string) =>
        sql.withTransaction(connections.restoreAfterLostRefresh("acc-lost", new Date(since)))
      const status = Effect.map(connections.get("acc-lost"), (c) => Option.getOrThrow(c).status)
      yield* TestClock.setTime(Date.parse("2026-02-01T12:00:00Z"))
      yield* connections.activate({ accountId: "acc-lost", accountName: "Lost", scopes: [], tokens: issued("a", "r") })
      yield* TestClock.setTime(Date.parse("2026-02-01T12:00:05Z"))
      yield* connections.markRevoked("acc-lost", "refresh refused: invalid_grant")
      // revoked before the refresh began: it stands
      expect(yield* restore("2026-02-01T12:00:06Z")).toBe(false)
      expect(yield* status).toBe("revoked")
      expect(yield* restore("2026-02-01T12:00:04Z")).toBe(true)
      expect(yield* status).toBe("active")
      // revoked for another reason (a 401 on a fresh token): it stands
      yield* connections.markRevoked("acc-lost", "the service rejected a freshly refreshed access token (401)")
      expect(yield* restore("2026-02-01T12:00:04Z")).toBe(false)
      expect(yield* status).toBe("revoked")
    })
  )

  it.effect("a disconnect event older than the current connection changes nothing", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      yield* TestClock.setTime(Date.parse("2026-01-01T12:00:00Z"))
      yield* connections.activate({ accountId: "acc-late", accountName: "Late", scopes: [], tokens: issued("a", "r") })
      const changed = yield* connections.markDisconnected("acc-late", "late webhook", { occurredAt: new Date("2026-01-01T11:58:00Z") })
      expect(changed).toBe(false)
      // late by less than a minute (a retried delivery after a quick reconnect): older than the connection all the same
      expect(yield* connections.markDisconnected("acc-late", "late webhook", { occurredAt: new Date("2026-01-01T11:59:30Z") })).toBe(false)
      expect(Option.getOrThrow(yield* connections.get("acc-late")).status).toBe("active")
      // of the connect's second (event times are whole seconds): a genuine disconnect is never lost
      expect(yield* connections.markDisconnected("acc-late", "webhook", { occurredAt: new Date("2026-01-01T12:00:00Z") })).toBe(true)
      expect(Option.getOrThrow(yield* connections.get("acc-late")).status).toBe("disconnected")
    })
  )

  it.effect("a connection is dated by the service's clock when its access token says (the clock disconnect events carry)", () =>
    Effect.gen(function* () {
      const connections = yield* Connections
      yield* TestClock.setTime(Date.parse("2026-01-01T12:00:00Z"))
      // the service's clock 45 s behind ours: its token was issued at 11:59:15 by it
      const issuedAt = new Date("2026-01-01T11:59:15Z")
      yield* connections.activate({ accountId: "acc-skew", accountName: "Skew", scopes: [], tokens: { ...issued("a", "r"), issuedAt } })
      expect(Option.getOrThrow(yield* connections.get("acc-skew")).connectedAt).toEqual(issuedAt)
      expect(yield* connections.markDisconnected("acc-skew", "late webhook", { occurredAt: new Date("2026-01-01T11:59:14Z") })).toBe(false)
      // 30 s after the connect on the service's clock (15 s before it on ours): a real disconnect
      expect(yield* connections.markDisconnected("acc-skew", "webhook", { occurredAt: new Date("2026-01-01T11:59:45Z") })).toBe(true)
    })
  )

  it.effect("pending flows: taken once (a replay is unknown), expire after 10 minutes, verifier encrypted", () =>
    Effect.gen(function* () {
      const pending = yield* PendingFlows
      const sql = yield* SqlClient.SqlClient
      const verifier = newCodeVerifier()
      yield* pending.save("state-1", Option.some(verifier), "198.51.100.1")
      yield* pending.save("state-2", Option.none(), "198.51.100.1")
      const raw = yield* sql<{ t: string }>`SELECT encode(code_verifier, 'escape') AS t FROM oauth_pending WHERE state = 'state-1'`
      expect(raw[0]!.t).not.toContain(Redacted.value(verifier))

      expect(Option.map(yield* pending.take("state-1"), Redacted.value)).toEqual(Option.some(Redacted.value(verifier)))
      expect((yield* Effect.flip(pending.take("state-1")))._tag).toBe("UnknownState")
      expect((yield* Effect.flip(pending.take("never-issued")))._tag).toBe("UnknownState")

      yield* TestClock.adjust(Duration.minutes(11))
      const expired = yield* Effect.exit(pending.take("state-2"))
      expect(Exit.isFailure(expired) && expired.cause._tag === "Fail" && expired.cause.error._tag).toBe("PendingFlowExpired")
    })
  )

  it.effect("pending flows are capped per client address (OAUTH_PENDING_PER_ADDRESS, here 2): one address full leaves the others room", () =>
    Effect.gen(function* () {
      const pending = yield* PendingFlows
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM oauth_pending`
      yield* pending.save("addr-1", Option.none(), "203.0.113.7")
      yield* pending.save("addr-2", Option.none(), "203.0.113.7")
      const full = yield* Effect.flip(pending.save("addr-3", Option.none(), "203.0.113.7"))
      expect(full._tag).toBe("PendingFlowsFull")
      expect(full.message).toBe(
        "2 authorization flows started from 203.0.113.7 are already pending (OAUTH_PENDING_PER_ADDRESS); no new one from there until some finish or expire"
      )
      yield* pending.save("addr-4", Option.none(), "203.0.113.8")
      const states = yield* sql<{ state: string; client_address: string }>`SELECT state, client_address FROM oauth_pending ORDER BY state`
      expect(states).toEqual([
        { state: "addr-1", client_address: "203.0.113.7" },
        { state: "addr-2", client_address: "203.0.113.7" },
        { state: "addr-4", client_address: "203.0.113.8" }
      ])
      yield* sql`DELETE FROM oauth_pending`
    })
  )

  it.effect("pending flows are capped (OAUTH_PENDING_MAX, here 3): expired ones are dropped first, beyond the cap a new one is refused", () =>
    Effect.gen(function* () {
      const pending = yield* PendingFlows
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM oauth_pending`
      yield* pending.save("cap-old-1", Option.none(), "198.51.100.1")
      yield* pending.save("cap-old-2", Option.none(), "198.51.100.2")
      yield* TestClock.adjust(Duration.minutes(11))
      // the two above have expired: they make room
      yield* pending.save("cap-1", Option.none(), "198.51.100.1")
      yield* pending.save("cap-2", Option.none(), "198.51.100.2")
      yield* pending.save("cap-3", Option.none(), "198.51.100.3")
      const full = yield* Effect.flip(pending.save("cap-4", Option.none(), "198.51.100.4"))
      expect(full._tag).toBe("PendingFlowsFull")
      expect(full.message).toContain("OAUTH_PENDING_MAX")
      const states = yield* sql<{ state: string }>`SELECT state FROM oauth_pending ORDER BY state`
      expect(states.map((r) => r.state)).toEqual(["cap-1", "cap-2", "cap-3"])
      // a finished flow frees its place
      yield* pending.take("cap-1")
      yield* pending.save("cap-4", Option.none(), "198.51.100.4")
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Metric, TestClock } from "effect"
import * as Metrics from "../../../src/observability/metrics.js"
import * as crypto from "node:crypto"
import { EventInbox } from "../../../src/changes/EventInbox.js"
import { body, connect, env, sign, Stack, state } from "../../support/webhookInbox.js"

layer(Stack)("APP_DISCONNECT webhook (verification and idempotency)", (it) => {
  it.effect("forged, unsigned, wrongly signed, re-serialized and malformed bodies change nothing", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w1")
      const raw = body("acc-w1")

      const unsigned = yield* Effect.flip(events.receive(raw, undefined))
      expect(unsigned._tag).toBe("WebhookSignatureInvalid")
      const empty = yield* Effect.flip(events.receive(raw, ""))
      expect(empty._tag).toBe("WebhookSignatureInvalid")
      const forged = yield* Effect.flip(events.receive(raw, sign(raw, "not-the-secret")))
      expect(forged._tag).toBe("WebhookSignatureInvalid")
      // the signature of one body does not carry over to another (here: another account)
      const swapped = yield* Effect.flip(events.receive(body("acc-other"), sign(raw)))
      expect(swapped._tag).toBe("WebhookSignatureInvalid")
      // the same JSON serialized differently is a different body: the HMAC is over the raw bytes
      const reformatted = Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 2))
      expect((yield* Effect.flip(events.receive(reformatted, sign(raw))))._tag).toBe("WebhookSignatureInvalid")
      const garbage = yield* Effect.flip(events.receive(raw, "%%%not base64%%%"))
      expect(garbage._tag).toBe("WebhookSignatureInvalid")

      for (const bad of [Buffer.from("{not json"), Buffer.from(JSON.stringify({ data: { webHookEvent: { topic: "APP_DISCONNECT" } } })), Buffer.from("")]) {
        expect((yield* Effect.flip(events.receive(bad, sign(bad))))._tag).toBe("WebhookMalformed")
      }
      expect(yield* state("acc-w1")).toEqual({ status: "active", hasTokens: true })
      expect(yield* sql`SELECT 1 FROM webhook_events`).toHaveLength(0)
    })
  )

  it.effect("a valid APP_DISCONNECT delivered three times is applied once", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w2")
      const raw = body("acc-w2", "2030-02-02T10:00:00Z")
      const first = yield* events.receive(raw, sign(raw))
      expect(first).toMatchObject({ _tag: "Applied", changed: true, accountId: "acc-w2" })
      expect(yield* state("acc-w2")).toEqual({ status: "disconnected", hasTokens: false })

      // the admin reconnects; late redeliveries of the same event must not undo that
      yield* connect("acc-w2")
      expect((yield* events.receive(raw, sign(raw)))._tag).toBe("Duplicate")
      expect((yield* events.receive(raw, sign(raw)))._tag).toBe("Duplicate")
      expect(yield* state("acc-w2")).toEqual({ status: "active", hasTokens: true })
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE account_id = 'acc-w2'`).toHaveLength(1)
    })
  )

  it.effect("a change event is recorded for the consumer (pending, not before its second has passed), and applied by nothing here", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w3")
      yield* TestClock.setTime(Date.parse("2030-03-03T00:00:00Z") - 200)
      const raw = body("acc-w3", "2030-03-03T00:00:00Z", "JOB_UPDATE")
      expect(yield* events.receive(raw, sign(raw))).toMatchObject({ _tag: "Queued", topic: "JOB_UPDATE", accountId: "acc-w3" })
      expect((yield* events.receive(raw, sign(raw)))._tag).toBe("Duplicate")
      expect(yield* state("acc-w3")).toEqual({ status: "active", hasTokens: true })
      const rows = yield* sql<{ state: string; item_id: string; next_attempt_at: Date; occurred_at: Date }>`
        SELECT state, item_id, next_attempt_at, occurred_at FROM webhook_events WHERE account_id = 'acc-w3'`
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ state: "pending", item_id: "acc-w3" })
      expect(rows[0]!.next_attempt_at.getTime()).toBe(rows[0]!.occurred_at.getTime() + 1000)
    })
  )

  it.effect("the account id may be the base64 of the account's number: it matches the connection; an unknown one is recorded unmatched", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      const b64 = (s: string) => Buffer.from(s).toString("base64")
      const graphqlId = b64("gid://service/Account/7001")
      yield* connect(graphqlId)
      const change = body(b64("7001"), "2030-04-04T00:00:00Z", "CLIENT_UPDATE")
      expect(yield* events.receive(change, sign(change))).toMatchObject({ _tag: "Queued", accountId: graphqlId })
      const unknown = body(b64("7999"), "2030-04-04T00:00:00Z", "CLIENT_UPDATE")
      expect(yield* events.receive(unknown, sign(unknown))).toMatchObject({ _tag: "Unmatched", accountId: b64("7999") })
      const stored = yield* sql<{ account_id: string | null; sent_account_id: string; state: string }>`
        SELECT account_id, sent_account_id, state FROM webhook_events WHERE topic = 'CLIENT_UPDATE' ORDER BY sent_account_id`
      expect(stored).toEqual([
        { account_id: graphqlId, sent_account_id: b64("7001"), state: "pending" },
        { account_id: null, sent_account_id: b64("7999"), state: "unmatched" }
      ])
      // APP_DISCONNECT in the numeric form disconnects the connection it names
      const disconnect = body("7001", "2030-04-05T00:00:00Z")
      expect(yield* events.receive(disconnect, sign(disconnect))).toMatchObject({ _tag: "Applied", changed: true, accountId: graphqlId })
      expect(yield* state(graphqlId)).toEqual({ status: "disconnected", hasTokens: false })
    })
  )

  it.effect("a signed delivery with a NUL in a field (Postgres cannot store it) is malformed, not a storage failure; nothing recorded", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w5")
      const withNul = body("acc-w5", "2030-05-05T00:00:00Z", "JOB_UPDATE", "gid-app-1", "job\u0000id")
      const refused = yield* Effect.flip(events.receive(withNul, sign(withNul)))
      expect(refused._tag).toBe("WebhookMalformed")
      expect(refused.message).toContain("itemId contains a NUL character")
      const nulTopic = body("acc-w5", "2030-05-05T00:00:00Z", "JOB_\u0000UPDATE")
      expect((yield* Effect.flip(events.receive(nulTopic, sign(nulTopic))))._tag).toBe("WebhookMalformed")
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE sent_account_id = 'acc-w5'`).toHaveLength(0)
    })
  )

  it.effect("a signed delivery for another app is refused and not recorded; ours by SERVICE_APP_ID or SERVICE_CLIENT_ID are taken", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w6")
      const foreign = body("acc-w6", "2030-06-06T00:00:00Z", "APP_DISCONNECT", "gid-someone-elses-app")
      const refused = yield* Effect.flip(events.receive(foreign, sign(foreign)))
      expect(refused._tag).toBe("WebhookForeignApp")
      expect(refused.message).toContain("gid-someone-elses-app")
      expect(yield* state("acc-w6")).toEqual({ status: "active", hasTokens: true })
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE sent_account_id = 'acc-w6'`).toHaveLength(0)

      const byClientId = body("acc-w6", "2030-06-06T00:00:00Z", "JOB_UPDATE", env.SERVICE_CLIENT_ID!)
      expect((yield* events.receive(byClientId, sign(byClientId)))._tag).toBe("Queued")
      const byAppId = body("acc-w6", "2030-06-06T00:00:01Z", "JOB_UPDATE", "gid-app-1")
      expect((yield* events.receive(byAppId, sign(byAppId)))._tag).toBe("Queued")
    })
  )

  it.effect("an account connected after a delivery for it went unmatched is matched by the next one (the inbox's known ids are read again on a miss)", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const b64 = (s: string) => Buffer.from(s).toString("base64")
      const first = body(b64("8001"), "2030-05-05T00:00:00Z", "JOB_UPDATE")
      expect(yield* events.receive(first, sign(first))).toMatchObject({ _tag: "Unmatched" })
      const graphqlId = b64("gid://service/Account/8001")
      yield* connect(graphqlId)
      const next = body(b64("8001"), "2030-05-05T00:00:01Z", "JOB_UPDATE")
      expect(yield* events.receive(next, sign(next))).toMatchObject({ _tag: "Queued", accountId: graphqlId })
    })
  )

  it.effect("occuredAt: one Postgres cannot store, or not RFC 3339, is refused (400) and nothing recorded; one far ahead is due within a minute of its arrival", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-w7")
      // the review's reproductions: 500 "retry later" before, forever
      for (const occuredAt of ["+275760-09-13T00:00:00.000Z", "+275760-09-12T23:59:59.500Z", "-271821-04-20T00:00:00Z", "1", "2026-11-24 18:40:00", "yesterday"]) {
        const bad = body("acc-w7", occuredAt, "JOB_UPDATE")
        const refused = yield* Effect.flip(events.receive(bad, sign(bad)))
        expect(refused._tag, occuredAt).toBe("WebhookMalformed")
        expect(refused.message).toContain("occuredAt")
      }
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE sent_account_id = 'acc-w7'`).toHaveLength(0)
      // the review's other reproduction: pending until the year 9999 before
      const now = Date.parse("2026-11-24T18:40:00Z")
      yield* TestClock.setTime(now)
      const ahead = body("acc-w7", "9999-12-31T23:59:59Z", "JOB_UPDATE")
      expect((yield* events.receive(ahead, sign(ahead)))._tag).toBe("Queued")
      const [row] = yield* sql<{ next_attempt_at: Date }>`SELECT next_attempt_at FROM webhook_events WHERE sent_account_id = 'acc-w7'`
      expect(row!.next_attempt_at.getTime()).toBeLessThanOrEqual(now + 61_000)
      expect(row!.next_attempt_at.getTime()).toBeGreaterThan(now)
    })
  )

  it.effect("a delivery's topic labels the received-events metric only when the service has such a topic; any other counts as `other`", () =>
    Effect.gen(function* () {
      const events = yield* EventInbox
      yield* connect("acc-w8")
      const random = Array.from({ length: 3 }, () => `TOPIC_${crypto.randomBytes(6).toString("hex").toUpperCase()}`)
      const other = Metric.tagged(Metrics.eventsReceived, "topic", "other")
      const before = (yield* Metric.value(other)).count
      for (const [k, topic] of random.entries()) {
        const raw = body("acc-w8", `2030-08-08T00:00:0${k}Z`, topic)
        expect((yield* events.receive(raw, sign(raw)))._tag).toBe("Queued")
      }
      const known = body("acc-w8", "2030-08-08T00:00:09Z", "JOB_UPDATE")
      yield* events.receive(known, sign(known))
      expect((yield* Metric.value(other)).count - before).toBe(3)
      const labels = (yield* Metric.snapshot)
        .filter((pair) => pair.metricKey.name === "account_sync_events_received_total")
        .flatMap((pair) => pair.metricKey.tags.filter((t) => t.key === "topic").map((t) => t.value))
      expect(labels).toContain("JOB_UPDATE")
      for (const topic of random) expect(labels).not.toContain(topic)
    })
  )
})

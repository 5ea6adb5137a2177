import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { Connections, ConnectionsLive } from "../../../src/auth/Connections.js"
import { EventInbox, EventInboxLive } from "../../../src/auth/EventInbox.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { TokenCipherLive } from "../../../src/auth/TokenCipher.js"
import { TokenKey } from "../../../src/auth/TokenKey.js"
import { TokenStoreLive } from "../../../src/auth/TokenStore.js"
import { EventQueueLive } from "../../../src/events/EventQueue.js"
import { offlineEnv } from "../../support/auth.js"
import { withEnv } from "../../support/config.js"
import { TestDatabaseLive } from "../../support/database.js"

/**
 * Group commit of webhook deliveries against real Postgres: deliveries that arrive together are recorded by one
 * statement, each exactly once, each answered only once its row is committed, and a group that fails fails every
 * delivery in it.
 */
const env = offlineEnv({ SERVICE_APP_ID: "gid-app-1" })
const secret = env.SERVICE_CLIENT_SECRET!
const Stack = EventInboxLive.pipe(
  Layer.provideMerge(Layer.merge(ConnectionsLive, EventQueueLive)),
  Layer.provideMerge(TokenStoreLive),
  Layer.provideMerge(TokenCipherLive),
  Layer.provideMerge(Layer.mergeAll(OAuthClient.layer, TokenKey.layer).pipe(Layer.provide(withEnv(env)))),
  Layer.provideMerge(TestDatabaseLive)
)

const delivery = (accountId: string, itemId: string, occuredAt = "2030-01-01T00:00:00Z") => {
  const raw = Buffer.from(JSON.stringify({ data: { webHookEvent: { topic: "JOB_UPDATE", appId: "gid-app-1", accountId, itemId, occuredAt } } }))
  return { raw, signature: crypto.createHmac("sha256", secret).update(raw).digest("base64") }
}

const connect = (accountId: string) =>
  Effect.flatMap(Connections, (c) =>
    c.activate({
      accountId,
      accountName: accountId,
      scopes: [],
      tokens: { accessToken: Redacted.make("a"), refreshToken: Option.some(Redacted.make("r")), expiresAt: new Date("2031-01-01"), scopes: Option.none() }
    })
  )

/** Every delivery at once, as concurrent requests do; each one's outcome, or its error. */
const receiveAll = (deliveries: ReadonlyArray<{ readonly raw: Buffer; readonly signature: string }>) =>
  Effect.flatMap(EventInbox, (inbox) => Effect.forEach(deliveries, (d) => Effect.either(inbox.receive(d.raw, d.signature)), { concurrency: "unbounded" }))

layer(Stack)("webhook deliveries recorded in groups", (it) => {
  it.effect("deliveries arriving together share INSERTs; each is recorded once, redeliveries in or after the group are duplicates, and none is answered before its row is committed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* EventInbox
      yield* connect("acc-g1")
      const distinct = Array.from({ length: 80 }, (_, k) => delivery("acc-g1", `job-${k}`))
      // every tenth sent twice in the same burst
      const burst = [...distinct, ...distinct.filter((_, k) => k % 10 === 0)]
      const answered = yield* Effect.forEach(
        burst,
        (d) =>
          Effect.gen(function* () {
            const outcome = yield* inbox.receive(d.raw, d.signature)
            // visible to another session the moment it is answered: committed, not merely sent
            const itemId = JSON.parse(d.raw.toString()).data.webHookEvent.itemId as string
            const seen = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = 'acc-g1' AND item_id = ${itemId}`
            return { itemId, tag: outcome._tag, seen: seen[0]!.n }
          }),
        { concurrency: "unbounded" }
      )
      expect(answered.every((a) => a.seen === 1)).toBe(true)
      const byItem = new Map<string, Array<string>>()
      for (const a of answered) byItem.set(a.itemId, [...(byItem.get(a.itemId) ?? []), a.tag])
      for (const [itemId, tags] of byItem) {
        const twice = Number(itemId.slice(4)) % 10 === 0
        expect([...tags].sort(), itemId).toEqual(twice ? ["Duplicate", "Queued"] : ["Queued"])
      }
      const rows = yield* sql<{ n: number; statements: number }>`
        SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS statements FROM webhook_events WHERE account_id = 'acc-g1'`
      expect(rows[0]!.n).toBe(80)
      // one transaction per group: far fewer than one per delivery
      expect(rows[0]!.statements).toBeLessThanOrEqual(40)

      // redelivered later, alone: still a duplicate, nothing added
      const again = yield* receiveAll(distinct.slice(0, 5))
      expect(again.map((r) => (Either.isRight(r) ? r.right._tag : r.left._tag))).toEqual(Array(5).fill("Duplicate"))
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = 'acc-g1'`)[0]!.n).toBe(80)
    })
  )

  it.effect("a group whose statement fails answers each of its deliveries with the storage error and records none; they are recorded when sent again", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-g2")
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_g2() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.account_id = 'acc-g2' THEN RAISE EXCEPTION 'storage refused for the test'; END IF; RETURN NEW; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_g2 BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION refuse_g2()`)
      const deliveries = Array.from({ length: 30 }, (_, k) => delivery("acc-g2", `job-${k}`))
      const failed = yield* receiveAll(deliveries)
      expect(failed.map((r) => (Either.isLeft(r) ? r.left._tag : r.right._tag))).toEqual(Array(30).fill("SqlError"))
      expect(yield* sql`SELECT 1 FROM webhook_events WHERE account_id = 'acc-g2'`).toHaveLength(0)

      yield* sql.unsafe(`DROP TRIGGER refuse_g2 ON webhook_events`)
      const retried = yield* receiveAll(deliveries)
      expect(retried.map((r) => (Either.isRight(r) ? r.right._tag : r.left._tag))).toEqual(Array(30).fill("Queued"))
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = 'acc-g2'`)[0]!.n).toBe(30)
    })
  )

  it.effect("a value Postgres refuses in one delivery makes that delivery malformed; the others of its group are recorded", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* connect("acc-g3")
      // a data exception (SQLSTATE class 22) for one item, as Postgres raises for a value it cannot store
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_bad_item() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.item_id = 'job-bad' THEN RAISE EXCEPTION 'cannot store %', NEW.item_id USING ERRCODE = '22023'; END IF; RETURN NEW; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_bad_item BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION refuse_bad_item()`)
      const deliveries = [...Array.from({ length: 20 }, (_, k) => delivery("acc-g3", `job-${k}`)), delivery("acc-g3", "job-bad")]
      const outcomes = yield* receiveAll(deliveries)
      yield* sql.unsafe(`DROP TRIGGER refuse_bad_item ON webhook_events`)
      expect(outcomes.map((r) => (Either.isRight(r) ? r.right._tag : r.left._tag))).toEqual([...Array(20).fill("Queued"), "WebhookMalformed"])
      const stored = yield* sql<{ item_id: string }>`SELECT item_id FROM webhook_events WHERE account_id = 'acc-g3'`
      expect(stored.map((r) => r.item_id).sort()).toEqual(Array.from({ length: 20 }, (_, k) => `job-${k}`).sort())
    })
  )
})

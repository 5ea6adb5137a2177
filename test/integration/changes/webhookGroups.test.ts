import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { EventInbox } from "../../../src/changes/EventInbox.js"
import { body, connect, sign, Stack } from "../../support/webhookInbox.js"

/**
 * Group commit of deliveries: those that arrive together are recorded by one statement, each exactly once, each
 * answered only once its row is committed; a group that fails fails every delivery in it.
 */
const delivery = (accountId: string, itemId: string) => {
  const raw = body(accountId, "2030-01-01T00:00:00Z", "JOB_UPDATE", "gid-app-1", itemId)
  return { raw, signature: sign(raw) }
}

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

  it.effect("200 deliveries at once, each sent twice (the copies in reverse order): groups in flight together record each once, none fails, each is answered only once its row is committed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* EventInbox
      yield* connect("acc-g4")
      const distinct = Array.from({ length: 100 }, (_, k) => ({ itemId: `job-${k}`, ...delivery("acc-g4", `job-${k}`) }))
      // the second copies in reverse: two groups holding the same ids in opposite orders would deadlock unless each
      // statement takes its rows in one order
      const burst = [...distinct, ...[...distinct].reverse()]
      const answered = yield* Effect.forEach(
        burst,
        (d) =>
          Effect.gen(function* () {
            const outcome = yield* Effect.either(inbox.receive(d.raw, d.signature))
            const seen = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = 'acc-g4' AND item_id = ${d.itemId}`
            return { itemId: d.itemId, tag: Either.isRight(outcome) ? outcome.right._tag : outcome.left._tag, seen: seen[0]!.n }
          }),
        { concurrency: "unbounded" }
      )
      // committed (visible to another session) before it was answered, and never a storage error
      expect(answered.filter((a) => a.seen !== 1)).toEqual([])
      const byItem = new Map<string, Array<string>>()
      for (const a of answered) byItem.set(a.itemId, [...(byItem.get(a.itemId) ?? []), a.tag])
      for (const [itemId, tags] of byItem) expect([...tags].sort(), itemId).toEqual(["Duplicate", "Queued"])
      const rows = yield* sql<{ n: number; distinctIds: number; pending: number }>`
        SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS "distinctIds", count(*) FILTER (WHERE state = 'pending')::int AS pending
        FROM webhook_events WHERE account_id = 'acc-g4'`
      expect(rows[0]).toEqual({ n: 100, distinctIds: 100, pending: 100 })
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

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import { topicsOf } from "../../../src/changes/Subscriptions.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { runCli, spawnCli } from "../../support/cli.js"
import { connectAccount, freePort, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { expectAccountExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"
import { waitForHealth } from "../../support/webhookDelivery.js"

// The whole account (every stream, links, line items, custom fields); serve and `webhooks subscribe` are child
// processes of the real program; the emulator sends its own webhooks for the changes its admin API makes.
const wholeAccount = { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }
const harness = syncHarness({ accounts: 1, jobs: 150, limits: { maxPoints: 100_000, restoreRate: 1_000_000 } }, { env: wholeAccount })

/** Polls `check` every 200 ms until it holds, for at most `limit` (then its last failure is the test's). */
const eventually = <A, E, R>(what: string, check: Effect.Effect<A, E, R>, limit: Duration.DurationInput = "60 seconds") =>
  check.pipe(
    Effect.catchAllDefect((e) => Effect.fail(e)),
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo(limit))),
    Effect.mapError((e) => new Error(`${what}: not within ${Duration.format(Duration.decode(limit))}: ${e instanceof Error ? e.message : String(e)}`)),
    Effect.orDie
  )

/** The settings of the connector as a child gets them, and serve's address (the URL the account subscribes). */
let port = 0
const childEnv = Effect.gen(function* () {
  return { ...(yield* TestDatabase).env, ...(yield* TestSettings), EVENTS_POLL_INTERVAL: "200 millis" }
})
const webhookUrl = () => `http://127.0.0.1:${port}/webhooks`

/** `serve` as a child process until the test's scope ends. */
const startServe = Effect.gen(function* () {
  const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], yield* childEnv)
  yield* waitForHealth(`http://127.0.0.1:${port}`, serve.child)
  return serve
})

/** Every delivery the emulator made has been answered 2xx, then every event recorded is settled: none pending. */
const settled = (accountId: string) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    yield* eventually(
      "every webhook delivered",
      Effect.flatMap(admin.webhookDeliveries(), (all) => Effect.sync(() => expect(all.filter((d) => d.status !== "delivered").map((d) => `${d.id} ${d.status} ${d.lastError ?? ""}`)).toEqual([])))
    )
    const sql = yield* SqlClient.SqlClient
    yield* eventually(
      "every change event applied",
      Effect.flatMap(
        sql<{ state: string; n: number }>`SELECT state, count(*)::int AS n FROM webhook_events WHERE account_id = ${accountId} AND state <> 'applied' GROUP BY state`,
        (rows) => Effect.sync(() => expect(rows).toEqual([]))
      )
    )
  })

type Touched = Record<string, { readonly created: ReadonlyArray<string>; readonly edited: ReadonlyArray<string>; readonly deleted: ReadonlyArray<string> }>

/** Creates, edits and deletions of jobs, clients, invoices (line items too) and visits; the ids each touched. */
const changeAcrossCollections = (accountId: string, seed: number) =>
  Effect.gen(function* () {
    const { admin } = yield* TestEmulator
    const touched: Touched = {}
    for (const collection of ["jobs", "clients", "invoices", "visits"]) {
      const created = (yield* admin.createRecords({ accountId, collection, count: 2, seed: ++seed })).ids
      const live = (yield* admin.listRecords({ accountId, collection })).map((r) => String(r.id)).filter((id) => !created.includes(id))
      // distinct records edited and deleted, drawn from the seed
      const shuffled = [...live].sort((a, b) => crypto.createHash("md5").update(`${seed}${a}`).digest("hex").localeCompare(crypto.createHash("md5").update(`${seed}${b}`).digest("hex")))
      const edited = (yield* admin.editRecords({ accountId, collection, ids: shuffled.slice(0, 3), seed: ++seed })).ids
      const deleted = (yield* admin.deleteRecords({ accountId, collection, ids: shuffled.slice(3, 5) })).ids
      touched[collection] = { created, edited, deleted }
    }
    // invoices' line items added, removed and edited (an update of the invoice), one of them just created
    yield* admin.editLineItems({ accountId, collection: "invoices", ids: [touched.invoices!.edited[0]!, touched.invoices!.created[0]!], add: 2, remove: 1, edit: 1, seed: ++seed })
    // and a job's (its visits' line items are the job's: no visit event comes, the JOB_UPDATE brings them)
    yield* admin.editLineItems({ accountId, collection: "jobs", ids: [touched.jobs!.edited[0]!], add: 1, remove: 1, edit: 1, seed: ++seed })
    return touched
  })

/** The changes are in the warehouse: deleted ids marked (their line items too), the rest exact. */
const expectLanded = (accountId: string, touched: Touched) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const counts = yield* expectAccountExact(allStreams, accountId)
    for (const [collection, ids] of Object.entries(touched)) {
      const stream = allStreams.find((s) => s.connection === collection)!
      const rows = yield* sql<{ id: string; deleted: boolean }>`
        SELECT id, deleted_at IS NOT NULL AS deleted FROM ${sql(stream.table)} WHERE account_id = ${accountId} AND id IN ${sql.in([...ids.created, ...ids.deleted])}`
      expect(rows.filter((r) => r.deleted).map((r) => r.id).sort(), `${collection} deleted`).toEqual([...ids.deleted].sort())
      expect(rows.filter((r) => !r.deleted).map((r) => r.id).sort(), `${collection} created`).toEqual([...ids.created].sort())
    }
    const [items] = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM invoice_line_items WHERE account_id = ${accountId} AND invoice_id IN ${sql.in(touched.invoices!.deleted)} AND deleted_at IS NULL`
    expect(items!.n).toBe(0)
    return counts
  })

const syncRuns = Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_runs`, (r) => r[0]!.n))

layer(harness, { timeout: 240_000, excludeTestServices: true })("the emulator's webhooks drive the warehouse (serve, end to end)", (it) => {
  it.scoped("webhooks subscribe creates the account's subscriptions at serve's /webhooks; run again, it creates none twice", () =>
    Effect.gen(function* () {
      const { admin, app, accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      port = yield* freePort
      const env = yield* childEnv
      const topics = [...topicsOf(allStreams)].sort()
      expect(topics).toEqual(expect.arrayContaining(["CLIENT_DESTROY", "INVOICE_UPDATE", "JOB_CREATE", "VISIT_DESTROY"]))

      const first = yield* runCli(["webhooks", "subscribe", "--url", webhookUrl()], env)
      expect(first.code, first.stderr).toBe(0)
      for (const topic of topics) expect(first.stdout).toMatch(new RegExp(`${accountId}\\s+${topic}\\s+created`))
      const subscribed = yield* admin.webhookSubscriptions({ clientId: app.clientId, accountId })
      expect(subscribed.map((s) => s.topic).sort()).toEqual(topics)
      expect(new Set(subscribed.map((s) => s.url))).toEqual(new Set([webhookUrl()]))

      const second = yield* runCli(["webhooks", "subscribe", "--url", webhookUrl()], env)
      expect(second.code, second.stderr).toBe(0)
      for (const topic of topics) expect(second.stdout).toMatch(new RegExp(`${accountId}\\s+${topic}\\s+exists`))
      expect(second.stdout).not.toContain("created")
      expect(yield* admin.webhookSubscriptions({ clientId: app.clientId, accountId })).toEqual(subscribed)
    })
  )

  it.scoped("after a backfill, creations, edits and deletions across collections reach the warehouse through webhooks alone: exact, deletions and line items included", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      expect((yield* (yield* SyncRunner).run({ mode: "backfill" }))[0]!.outcome).toBe("synced")
      yield* expectAccountExact(allStreams, accountId)
      const runs = yield* syncRuns

      yield* startServe
      const touched = yield* changeAcrossCollections(accountId, 1000)
      yield* settled(accountId)
      yield* expectLanded(accountId, touched)
      // no pass ran: the webhooks alone brought every change
      expect(yield* syncRuns).toBe(runs)
    })
  )

  it.scoped("duplicated, delayed and reordered deliveries with numeric account ids leave the warehouse exact; a forged delivery changes nothing", () =>
    Effect.gen(function* () {
      const { admin, accounts, app } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      const runs = yield* syncRuns
      yield* admin.setWebhookOptions({ duplicateRate: 0.5, delayMs: 400, delayRandom: true, reorderWindowMs: 300, accountIdEncoding: "numeric", seed: 11 })
      const deliveriesBefore = (yield* admin.webhookDeliveries()).length
      const eventsBefore = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events`)[0]!.n

      yield* startServe
      const touched = yield* changeAcrossCollections(accountId, 2000)
      // the same records changed again at once: their events may arrive in either order
      yield* admin.editRecords({ accountId, collection: "jobs", ids: touched.jobs!.edited, seed: 2100 })
      yield* admin.editRecords({ accountId, collection: "clients", ids: touched.clients!.created, seed: 2101 })

      // forged: signed with another secret, and a genuine signature over a body changed afterwards
      const liveJob = touched.jobs!.edited[0]!
      const number = /(\d+)$/.exec(Buffer.from(accountId, "base64").toString())![1]!
      const body = (itemId: string) =>
        JSON.stringify({ data: { webHookEvent: { topic: "JOB_DESTROY", appId: app.appId, accountId: Buffer.from(number).toString("base64"), itemId, occuredAt: new Date().toISOString().replace(/\.\d+Z$/, "Z") } } })
      const post = (payload: string, signature: string) =>
        Effect.promise(() =>
          fetch(webhookUrl(), { method: "POST", headers: { "content-type": "application/json", "x-service-hmac-sha256": signature }, body: payload }).then((r) => r.status)
        )
      expect(yield* post(body(liveJob), crypto.createHmac("sha256", "not-the-secret").update(body(liveJob)).digest("base64"))).toBe(401)
      const genuine = crypto.createHmac("sha256", app.clientSecret).update(body("Z2lkOi8vc2VydmljZS9Kb2IvMQ==")).digest("base64")
      expect(yield* post(body(liveJob), genuine)).toBe(401)

      yield* settled(accountId)
      yield* expectLanded(accountId, touched)
      expect(yield* syncRuns).toBe(runs)

      const deliveries = (yield* admin.webhookDeliveries()).slice(deliveriesBefore)
      const duplicates = deliveries.filter((d) => d.redeliveryOf !== undefined).length
      expect(duplicates).toBeGreaterThan(0)
      for (const d of deliveries) expect(JSON.parse(d.body).data.webHookEvent.accountId).toBe(Buffer.from(number).toString("base64"))
      // each event recorded once, however often it came; the forged ones not at all
      const distinct = new Set(deliveries.map((d) => d.body)).size
      const eventsAfter = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events`)[0]!.n
      expect(eventsAfter - eventsBefore).toBe(distinct)
      const [forged] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE topic = 'JOB_DESTROY' AND item_id = ${liveJob}`
      expect(forged!.n).toBe(0)
    })
  )
})

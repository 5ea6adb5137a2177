import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { EmulatorAdminClient } from "../../../src/emulator/EmulatorAdminClient.js"
import { makeTestEmulator } from "../../support/emulator.js"
import { connect, graphql, listen, waitFor, waitUntil } from "../../support/emulatorClient.js"

interface Received {
  readonly body: string
  readonly event: { topic: string; appId: string; accountId: string; itemId: string; occuredAt: string }
  readonly signature: string | undefined
  readonly atMs: number
}

/** A receiver that keeps every delivery, parsed. */
const receiver = Effect.gen(function* () {
  const got: Array<Received> = []
  const url = yield* listen((body, headers) => {
    got.push({ body, event: JSON.parse(body).data.webHookEvent, signature: headers["x-service-hmac-sha256"] as string | undefined, atMs: Date.now() })
  })
  return { got, url }
})

const signed = (r: Received, secret: string) => r.signature === crypto.createHmac("sha256", secret).update(r.body).digest("base64")

const SUBSCRIPTIONS = `{ webhookSubscriptions(first: 100) { nodes { id topic url attachedTo { __typename ... on Account { id } } createdBy { __typename ... on Application { id } } } totalCount } }`
const CREATE = `mutation C($input: WebhookSubscriptionCreateInput!) {
  webhookSubscriptionCreate(input: $input) { webhookSubscription { id topic url } userErrors { message path } }
}`
const DELETE = `mutation D($ids: [EncodedId!]!) {
  webhookSubscriptionDelete(webhookSubscriptionIds: $ids) { deletedWebhookSubscriptions { id topic } userErrors { message path } }
}`

describe("change webhooks", () => {
  it.scopedLive("webhookSubscriptionCreate subscribes an app's account to a topic; webhookSubscriptions lists it; webhookSubscriptionDelete removes it", () =>
    Effect.gen(function* () {
      const { url } = yield* receiver
      const emu = yield* makeTestEmulator({ jobs: 30, accounts: 2 })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu, accountId)
      const created = yield* graphql(emu, access_token, CREATE, { variables: { input: { topic: "JOB_UPDATE", url } } })
      expect(created.json.errors).toBeUndefined()
      const subscription = created.json.data.webhookSubscriptionCreate.webhookSubscription
      expect(subscription).toMatchObject({ topic: "JOB_UPDATE", url })
      expect(created.json.data.webhookSubscriptionCreate.userErrors).toEqual([])
      // the same topic at the same URL again: refused with a user error, nothing created
      const again = yield* graphql(emu, access_token, CREATE, { variables: { input: { topic: "JOB_UPDATE", url } } })
      expect(again.json.data.webhookSubscriptionCreate).toEqual({
        webhookSubscription: null,
        userErrors: [{ message: `JOB_UPDATE is already subscribed at ${url}`, path: ["input", "topic"] }]
      })
      const badUrl = yield* graphql(emu, access_token, CREATE, { variables: { input: { topic: "JOB_CREATE", url: "not a url" } } })
      expect(badUrl.json.data.webhookSubscriptionCreate.userErrors[0].path).toEqual(["input", "url"])
      const unknownTopic = yield* graphql(emu, access_token, CREATE, { variables: { input: { topic: "JOB_EXPLODE", url } } })
      expect(unknownTopic.json.errors[0].message).toContain("JOB_EXPLODE")

      const listed = yield* graphql(emu, access_token, SUBSCRIPTIONS)
      expect(listed.json.data.webhookSubscriptions).toEqual({
        nodes: [{ id: subscription.id, topic: "JOB_UPDATE", url, attachedTo: { __typename: "Account", id: accountId }, createdBy: { __typename: "Application", id: emu.app.appId } }],
        totalCount: 1
      })
      expect(yield* emu.admin.webhookSubscriptions({ clientId: emu.app.clientId })).toMatchObject([{ id: subscription.id, accountId, topic: "JOB_UPDATE", url }])
      // another account of the same app has its own (none)
      const other = yield* connect(emu, emu.accounts[1]!.accountId)
      expect((yield* graphql(emu, other.access_token, SUBSCRIPTIONS)).json.data.webhookSubscriptions.nodes).toEqual([])

      const deleted = yield* graphql(emu, access_token, DELETE, { variables: { ids: [subscription.id, "bm9wZQ=="] } })
      expect(deleted.json.data.webhookSubscriptionDelete.deletedWebhookSubscriptions).toEqual([{ id: subscription.id, topic: "JOB_UPDATE" }])
      expect(deleted.json.data.webhookSubscriptionDelete.userErrors).toEqual([
        { message: "no webhook subscription bm9wZQ== of this app for this account", path: ["webhookSubscriptionIds"] }
      ])
      expect((yield* graphql(emu, access_token, SUBSCRIPTIONS)).json.data.webhookSubscriptions.totalCount).toBe(0)
    })
  )

  it.scopedLive("every create, update and destroy through the admin API is sent, signed, to the subscribers of its topic", () =>
    Effect.gen(function* () {
      const { got, url } = yield* receiver
      const emu = yield* makeTestEmulator({ jobs: 30 })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu, accountId)
      for (const topic of ["JOB_CREATE", "JOB_UPDATE", "JOB_DESTROY", "INVOICE_UPDATE", "USER_UPDATE", "VISIT_DESTROY"]) {
        yield* graphql(emu, access_token, CREATE, { variables: { input: { topic, url } } })
      }
      const before = yield* emu.admin.clock()
      const created = (yield* emu.admin.createRecords({ accountId, collection: "jobs", count: 2, seed: 5 })).ids
      const edited = (yield* emu.admin.editRecords({ accountId, collection: "jobs", count: 3, seed: 7 })).ids
      const untouched = (yield* emu.admin.listRecords({ accountId, collection: "jobs" })).map((j) => j.id).filter((id) => !edited.includes(id) && !created.includes(id))
      const destroyed = (yield* emu.admin.deleteRecords({ accountId, collection: "jobs", ids: untouched.slice(0, 1) })).ids
      const invoices = (yield* emu.admin.editLineItems({ accountId, collection: "invoices", count: 2, edit: 1, seed: 9 })).ids
      const users = (yield* emu.admin.editRecords({ accountId, collection: "users", count: 1, seed: 10 })).ids
      // not subscribed (CLIENT_UPDATE), or no topic at all for the change (users are never destroyed: no USER_DESTROY)
      yield* emu.admin.editRecords({ accountId, collection: "clients", count: 2, seed: 11 })
      yield* emu.admin.deleteRecords({ accountId, collection: "users", count: 1, seed: 12 })
      const expected = [
        ...created.map((id) => ["JOB_CREATE", id]),
        ...edited.map((id) => ["JOB_UPDATE", id]),
        ...destroyed.map((id) => ["JOB_DESTROY", id]),
        ...invoices.map((id) => ["INVOICE_UPDATE", id]),
        ...users.map((id) => ["USER_UPDATE", id])
      ]
      // deliveries are queued as the changes are made: the list is complete at once, then each is answered
      expect((yield* emu.admin.webhookDeliveries()).map((d) => [d.topic, d.itemId]).sort()).toEqual([...expected].sort())
      yield* waitUntil(Effect.map(emu.admin.webhookDeliveries(), (all) => all.every((d) => d.status === "delivered")))
      expect(got.map((r) => [r.event.topic, r.event.itemId]).sort()).toEqual([...expected].sort())
      for (const r of got) {
        expect(signed(r, emu.app.clientSecret)).toBe(true)
        expect(r.event).toMatchObject({ appId: emu.app.appId, accountId })
        expect(Date.parse(r.event.occuredAt)).toBeGreaterThanOrEqual(Math.floor(before.nowMs / 1000) * 1000)
      }
      // an edited job's event carries its new update time
      const job = (yield* emu.admin.listRecords({ accountId, collection: "jobs" })).find((j) => j.id === edited[0])!
      expect(got.find((r) => r.event.itemId === edited[0])!.event.occuredAt).toBe(job.updatedAt)
      for (const d of yield* emu.admin.webhookDeliveries()) expect(d.answerMs).toBeGreaterThan(0)
    })
  )

  it.scopedLive("churn sends its changes too; app-level webhookTopics need no subscription; a disconnected app gets nothing", () =>
    Effect.gen(function* () {
      const { got, url } = yield* receiver
      const emu = yield* makeTestEmulator({ jobs: 40, webhookUrl: url })
      const accountId = emu.accounts[0]!.accountId
      const { access_token } = yield* connect(emu, accountId)
      yield* emu.admin.updateApp({ clientId: emu.app.clientId, webhookTopics: ["JOB_CREATE", "JOB_UPDATE", "JOB_DESTROY"] })
      yield* emu.admin.setChurn({ accountId, creates: 1, edits: 2, deletes: 1, queries: 1, seed: 3 })
      yield* graphql(emu, access_token, `{ jobs(first: 5) { nodes { id } } }`)
      const log = yield* emu.admin.churnLog({ accountId })
      expect(log).toHaveLength(4)
      yield* waitFor(() => got.length === log.length)
      const topic = { create: "JOB_CREATE", update: "JOB_UPDATE", destroy: "JOB_DESTROY" } as const
      expect(got.map((r) => [r.event.topic, r.event.itemId]).sort()).toEqual(log.map((c) => [topic[c.kind], c.id]).sort())

      const bad = yield* Effect.flip(emu.admin.updateApp({ clientId: emu.app.clientId, webhookTopics: ["JOB_UPDATE", "JOB_EXPLODE"] }))
      expect(bad.reason).toBe("updateApp: webhookTopics: JOB_EXPLODE is not a WebHookTopicEnum value")

      // the app disconnected from the account: no more events of it (APP_DISCONNECT itself is sent)
      yield* emu.admin.marketplaceDisconnect({ clientId: emu.app.clientId, accountId })
      yield* emu.admin.editRecords({ accountId, collection: "jobs", count: 2 })
      expect((yield* emu.admin.webhookDeliveries()).map((d) => d.topic).slice(log.length)).toEqual(["APP_DISCONNECT"])
    })
  )

  it.scopedLive("setWebhookOptions: duplicates byte for byte, numeric account ids, delays and shuffled order, all over the HTTP admin", () =>
    Effect.gen(function* () {
      const { got, url } = yield* receiver
      const emu = yield* makeTestEmulator({ jobs: 40, webhookUrl: url })
      const admin = yield* EmulatorAdminClient.make(emu.baseUrl)
      const accountId = emu.accounts[0]!.accountId
      yield* connect(emu, accountId)
      yield* admin.updateApp({ clientId: emu.app.clientId, webhookTopics: ["JOB_UPDATE"] })

      // every event twice, with the account's number in base64 (as the real service's webhooks spell it)
      yield* admin.setWebhookOptions({ duplicateRate: 1, accountIdEncoding: "numeric", seed: 5 })
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 3, seed: 1 })).ids
      yield* waitFor(() => got.length === 6)
      const number = /(\d+)$/.exec(Buffer.from(accountId, "base64").toString())![1]!
      for (const id of edited) {
        const copies = got.filter((r) => r.event.itemId === id)
        expect(copies).toHaveLength(2)
        expect(copies[1]!.body).toBe(copies[0]!.body)
        expect(copies[0]!.event.accountId).toBe(Buffer.from(number).toString("base64"))
        expect(signed(copies[0]!, emu.app.clientSecret)).toBe(true)
      }
      const deliveries = yield* admin.webhookDeliveries()
      expect(deliveries.filter((d) => d.redeliveryOf !== undefined)).toHaveLength(3)
      expect(deliveries[0]!.accountId).toBe(accountId)

      // a fixed delay before the first attempt
      got.length = 0
      yield* admin.setWebhookOptions({ delayMs: 400 })
      const sentAt = Date.now()
      yield* admin.editRecords({ accountId, collection: "jobs", count: 1, seed: 2 })
      yield* waitFor(() => got.length === 1)
      expect(got[0]!.atMs - sentAt).toBeGreaterThanOrEqual(390)
      expect(got[0]!.event.accountId).toBe(accountId)

      // held for the window, then sent in a seeded shuffle: not the order the changes were made in
      got.length = 0
      yield* admin.setWebhookOptions({ reorderWindowMs: 300, seed: 9 })
      const order: Array<string> = []
      const firstMadeAt = Date.now()
      for (let k = 0; k < 12; k++) order.push(...(yield* admin.editRecords({ accountId, collection: "jobs", count: 1, seed: 100 + k })).ids)
      yield* waitFor(() => got.length === 12)
      // held for the window from the first change (the 12 admin calls may take longer than that on a loaded machine)
      expect(got[0]!.atMs - firstMadeAt).toBeGreaterThanOrEqual(290)
      expect(got.map((r) => r.event.itemId).sort()).toEqual([...order].sort())
      expect(got.map((r) => r.event.itemId)).not.toEqual(order)

      const refused = yield* Effect.flip(admin.setWebhookOptions({ duplicateRate: 2 }))
      expect(refused.reason).toBe("setWebhookOptions: duplicateRate must be a number from 0 to 1, got 2")
    })
  )
})

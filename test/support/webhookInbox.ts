import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { Connections, ConnectionsLive } from "../../src/auth/Connections.js"
import { EventInboxLive } from "../../src/changes/EventInbox.js"
import { EventQueueLive } from "../../src/changes/EventQueue.js"
import { TokenCipherLive } from "../../src/auth/TokenCipher.js"
import { TokenStore, TokenStoreLive } from "../../src/auth/TokenStore.js"
import { TestDatabaseLive } from "./database.js"
import { offlineEnv } from "./auth.js"
import { withEnv } from "./config.js"
import { OAuthClient } from "../../src/auth/OAuthClient.js"
import { TokenKey } from "../../src/auth/TokenKey.js"

/** The webhook inbox over a fresh schema, offline settings, and what its tests send and read (changes/webhooks*.test.ts). */
export const env = offlineEnv({ SERVICE_APP_ID: "gid-app-1" })
export const secret = env.SERVICE_CLIENT_SECRET!
const settingsLayer = Layer.mergeAll(OAuthClient.layer, TokenKey.layer).pipe(Layer.provide(withEnv(env)))
export const Stack = EventInboxLive.pipe(
  Layer.provideMerge(Layer.merge(ConnectionsLive, EventQueueLive)),
  Layer.provideMerge(TokenStoreLive),
  Layer.provideMerge(TokenCipherLive),
  Layer.provideMerge(settingsLayer),
  Layer.provideMerge(TestDatabaseLive)
)

export const body = (accountId: string, occuredAt = "2030-01-01T00:00:00Z", topic = "APP_DISCONNECT", appId = "gid-app-1", itemId = accountId) =>
  Buffer.from(JSON.stringify({ data: { webHookEvent: { topic, appId, accountId, itemId, occuredAt } } }))
export const sign = (raw: Uint8Array, key = secret) => crypto.createHmac("sha256", key).update(raw).digest("base64")

export const connect = (accountId: string) =>
  Effect.flatMap(Connections, (c) =>
    c.activate({
      accountId,
      accountName: accountId,
      scopes: [],
      tokens: { accessToken: Redacted.make("a"), refreshToken: Option.some(Redacted.make("r")), expiresAt: new Date("2031-01-01"), scopes: Option.none() }
    })
  )

export const state = (accountId: string) =>
  Effect.gen(function* () {
    const c = Option.getOrThrow(yield* (yield* Connections).get(accountId))
    const tokens = yield* (yield* TokenStore).read(accountId)
    return { status: c.status, hasTokens: Option.isSome(tokens) }
  })

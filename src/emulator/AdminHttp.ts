import { Effect, Either, type Schema as S, Schema } from "effect"
import { type AdminOperation, adminOperations, requestBodies } from "./AdminProtocol.js"
import { type EmulatorAdmin, EmulatorAdminError } from "./EmulatorAdmin.js"
import { jsonReply, type Reply } from "./Http.js"

/** `POST /__admin/<operation>`: decodes the JSON body with the operation's Schema and runs it on the admin. */

type Bodies = { readonly [K in AdminOperation]: S.Schema.Type<(typeof requestBodies)[K]> }

const dispatch: { readonly [K in AdminOperation]: (admin: EmulatorAdmin, body: Bodies[K]) => Effect.Effect<unknown, unknown> } = {
  createApp: (a, b) => a.createApp(b),
  createAccount: (a, b) => a.createAccount(b),
  seedJobs: (a, b) => a.seedJobs(b.accountId, b.count, b.seed),
  listJobs: (a, b) => a.listJobs(b.accountId),
  editJobs: (a, { accountId, ...options }) => a.editJobs(accountId, options),
  deleteJobs: (a, { accountId, ...options }) => a.deleteJobs(accountId, options),
  listRecords: (a, b) => a.listRecords(b.accountId, b.collection),
  createRecords: (a, b) => a.createRecords(b.accountId, b.collection, b.count, b.seed),
  editRecords: (a, { accountId, collection, ...selection }) => a.editRecords(accountId, collection, selection),
  deleteRecords: (a, { accountId, collection, ...selection }) => a.deleteRecords(accountId, collection, selection),
  editLineItems: (a, { accountId, collection, ...selection }) => a.editLineItems(accountId, collection, selection),
  setChurn: (a, b) => a.setChurn(b),
  churnLog: (a, b) => a.churnLog(b.accountId),
  setCursorMode: (a, b) => a.setCursorMode(b.mode, b.accountId),
  setApproval: (a, b) => a.setApproval(b),
  marketplaceDisconnect: (a, b) => a.marketplaceDisconnect(b.clientId, b.accountId),
  automaticDisconnect: (a, b) => a.automaticDisconnect(b.clientId, b.accountId, b.reason),
  regenerateSecret: (a, b) => a.regenerateSecret(b.clientId),
  reauthorizeAfterScopeChange: (a, b) => a.reauthorizeAfterScopeChange(b.clientId, b.accountId, b.scopes),
  startSandboxSession: (a, b) => a.startSandboxSession(b.clientId, b.accountId),
  setLimits: (a, b) => a.setLimits(b),
  setFaults: (a, b) => a.setFaults(b),
  advanceClock: (a, b) => a.advanceClock(b.seconds),
  isRefreshTokenValid: (a, b) => a.isRefreshTokenValid(b.clientId, b.refreshToken),
  liveRefreshTokens: (a, b) => a.liveRefreshTokens(b.clientId, b.accountId),
  stats: (a) => a.stats(),
  resetStats: (a) => a.resetStats(),
  updateApp: (a, { clientId, ...patch }) => a.updateApp(clientId, patch),
  webhookDeliveries: (a) => a.webhookDeliveries(),
  setWebhookOptions: (a, b) => a.setWebhookOptions(b),
  webhookSubscriptions: (a, b) => a.webhookSubscriptions(b),
  redeliverWebhook: (a) => a.redeliverWebhook(),
  clock: (a) => a.clock()
}

const failure = (operation: string, reason: string, status = 400) => jsonReply(status, { error: { operation, reason } })

export const handleAdmin = (admin: EmulatorAdmin, operation: string, rawBody: string): Effect.Effect<Reply> => {
  if (!(adminOperations as ReadonlyArray<string>).includes(operation)) {
    return Effect.succeed(failure(operation, `unknown admin operation; known: ${adminOperations.join(", ")}`, 404))
  }
  const op = operation as AdminOperation
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(requestBodies[op] as Schema.Schema<unknown, unknown>))(rawBody.trim() === "" ? "{}" : rawBody)
  if (Either.isLeft(decoded)) return Effect.succeed(failure(op, `invalid body: ${decoded.left.message}`))
  const run = dispatch[op] as (admin: EmulatorAdmin, body: unknown) => Effect.Effect<unknown, unknown>
  return run(admin, decoded.right).pipe(
    Effect.match({
      onSuccess: (result) => jsonReply(200, { result: result ?? null }),
      onFailure: (e) => failure(op, e instanceof EmulatorAdminError ? e.reason : e instanceof Error ? e.message : String(e))
    })
  )
}

import { Duration, Effect, Schema } from "effect"
import { type AdminOperation, resultBodies } from "./AdminProtocol.js"
import { type EmulatorAdmin, EmulatorAdminError } from "./EmulatorAdmin.js"

/**
 * `EmulatorAdmin` over HTTP, for the demo, benchmarks and child processes: each call is
 * `POST {baseUrl}/__admin/<operation>` (the emulator must run with `--admin`). Each call times out after 30 s.
 */

const CALL_TIMEOUT = Duration.seconds(30)

const ErrorBody = Schema.Struct({ error: Schema.Struct({ operation: Schema.String, reason: Schema.String }) })
const ResultEnvelope = Schema.Struct({ result: Schema.Unknown })

const call = <K extends AdminOperation>(baseUrl: string, operation: K, body: object) =>
  Effect.gen(function* () {
    const fail = (reason: string) => new EmulatorAdminError({ operation, reason })
    const res = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(`${baseUrl}/__admin/${operation}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal }),
      catch: (e) => fail(`request to ${baseUrl} failed: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(Effect.timeoutFail({ duration: CALL_TIMEOUT, onTimeout: () => fail(`no answer from ${baseUrl} within 30 s`) }))
    const text = yield* Effect.tryPromise({ try: () => res.text(), catch: () => fail("the answer's body could not be read") })
    if (!res.ok) {
      const err = Schema.decodeUnknownOption(Schema.parseJson(ErrorBody))(text)
      return yield* Effect.fail(
        fail(err._tag === "Some" ? err.value.error.reason : `HTTP ${res.status}${res.status === 404 ? " (is the emulator running with --admin?)" : ""}: ${text.slice(0, 200)}`)
      )
    }
    const envelope = yield* Schema.decodeUnknown(Schema.parseJson(ResultEnvelope))(text).pipe(Effect.mapError(() => fail(`unexpected answer: ${text.slice(0, 200)}`)))
    const schema = resultBodies[operation] as unknown as Schema.Schema<Schema.Schema.Type<(typeof resultBodies)[K]>, unknown>
    return yield* Schema.decodeUnknown(schema)(envelope.result).pipe(Effect.mapError((e) => fail(`unexpected result: ${e.message}`)))
  })

export const EmulatorAdminClient = {
  make: (baseUrl: string): EmulatorAdmin => {
    const base = baseUrl.replace(/\/+$/, "")
    return {
      baseUrl: base,
      createApp: (spec) => call(base, "createApp", spec),
      createAccount: (spec) => call(base, "createAccount", spec),
      seedJobs: (accountId, count, seed) => call(base, "seedJobs", { accountId, count, seed }),
      listJobs: (accountId) => call(base, "listJobs", { accountId }),
      editJobs: (accountId, options) => call(base, "editJobs", { accountId, ...options }),
      deleteJobs: (accountId, options) => call(base, "deleteJobs", { accountId, ...options }),
      listRecords: (accountId, collection) => call(base, "listRecords", { accountId, collection }),
      createRecords: (accountId, collection, count, seed) => call(base, "createRecords", { accountId, collection, count, seed }),
      editRecords: (accountId, collection, selection) => call(base, "editRecords", { accountId, collection, ...selection }),
      deleteRecords: (accountId, collection, selection) => call(base, "deleteRecords", { accountId, collection, ...selection }),
      editLineItems: (accountId, collection, selection) => call(base, "editLineItems", { accountId, collection, ...selection }),
      setChurn: (options) => Effect.asVoid(call(base, "setChurn", options)),
      churnLog: (accountId) => call(base, "churnLog", { accountId }),
      setCursorMode: (mode, accountId) => Effect.asVoid(call(base, "setCursorMode", { mode, accountId })),
      setApproval: (options) => Effect.asVoid(call(base, "setApproval", options)),
      marketplaceDisconnect: (clientId, accountId) => Effect.asVoid(call(base, "marketplaceDisconnect", { clientId, accountId })),
      automaticDisconnect: (clientId, accountId, reason) => Effect.asVoid(call(base, "automaticDisconnect", { clientId, accountId, reason })),
      regenerateSecret: (clientId) => call(base, "regenerateSecret", { clientId }),
      reauthorizeAfterScopeChange: (clientId, accountId, scopes) =>
        Effect.asVoid(call(base, "reauthorizeAfterScopeChange", { clientId, accountId, scopes })),
      startSandboxSession: (clientId, accountId) => call(base, "startSandboxSession", { clientId, accountId }),
      setLimits: (limits) => Effect.asVoid(call(base, "setLimits", limits)),
      setFaults: (faults) => Effect.asVoid(call(base, "setFaults", faults)),
      advanceClock: (seconds) => Effect.asVoid(call(base, "advanceClock", { seconds })),
      isRefreshTokenValid: (clientId, refreshToken) => call(base, "isRefreshTokenValid", { clientId, refreshToken }),
      liveRefreshTokens: (clientId, accountId) => call(base, "liveRefreshTokens", { clientId, accountId }),
      stats: () => call(base, "stats", {}),
      resetStats: () => Effect.asVoid(call(base, "resetStats", {})),
      updateApp: (clientId, patch) => Effect.asVoid(call(base, "updateApp", { clientId, ...patch })),
      webhookDeliveries: () => call(base, "webhookDeliveries", {}),
      setWebhookOptions: (options) => Effect.asVoid(call(base, "setWebhookOptions", options)),
      webhookSubscriptions: (filter) => call(base, "webhookSubscriptions", filter),
      redeliverWebhook: () => call(base, "redeliverWebhook", {}),
      clock: () => call(base, "clock", {})
    }
  }
}

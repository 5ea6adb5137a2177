import { HttpApp } from "@effect/platform"
import { RpcSerialization, RpcServer, RpcTest } from "@effect/rpc"
import { Clock, Context, Data, Effect, FiberSet, Layer, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { adminHandlers } from "./Admin.js"
import { ADMIN_PATH } from "./EmulatorAdminClient.js"
import { ApiVersions } from "./ApiVersions.js"
import { AppsAndAccounts } from "./AppsAndAccounts.js"
import { Churn } from "./Churn.js"
import { type AccountSpec, AdminRpcs, type ApiVersionsSettings, type AppSpec, type EmulatorAdmin, type Faults, type Limits } from "./EmulatorAdmin.js"
import { FaultInjector } from "./Faults.js"
import { PagingFaults } from "./PagingFaults.js"
import { Grants } from "./Grants.js"
import { handleGraphql, serviceSchema } from "./GraphqlEndpoint.js"
import { BodyTooLarge, jsonReply, readBody, type Reply, writeReply, writeTruncated } from "./Http.js"
import { type Approval, OAuthEndpoints } from "./OAuthEndpoints.js"
import { LimitsBook } from "./RateLimits.js"
import type { RecordDefinition } from "./data/RecordDefinition.js"
import { RecordChanges } from "./RecordChanges.js"
import { makeRoutes } from "./Routes.js"
import { StatsCounter } from "./Stats.js"
import { TokenInvalidation } from "./TokenInvalidation.js"
import { VirtualClock } from "./VirtualClock.js"
import { type WebhookRetryOptions, Webhooks } from "./Webhooks.js"
import { WebhookSubscriptions } from "./WebhookSubscriptions.js"

/**
 * The service emulator: a `node:http` server on 127.0.0.1 (raw control for dropped connections and truncated
 * bodies), a scoped resource that stops with its scope. Everything is in memory; see src/emulator/README.md.
 */

export interface EmulatorOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number
  readonly host?: string
  /** Serve the admin API over HTTP at /__admin (always available in process as `admin`). */
  readonly admin?: boolean
  readonly apps?: ReadonlyArray<AppSpec>
  readonly accounts?: ReadonlyArray<AccountSpec>
  readonly approval?: { readonly mode: "auto" | "manual"; readonly accountId?: string }
  readonly limits?: Limits
  readonly faults?: Faults
  readonly webhookRetry?: WebhookRetryOptions
  /**
   * Collection definitions that replace the default data set of a root field (by name) in every account, in process
   * only (a definition is code): a test serves its own record type at an existing root field of the schema.
   */
  readonly definitions?: ReadonlyArray<RecordDefinition>
  /** The API versions served (default: 2025-01-20 alone, the vendored schema, never removed); see ApiVersions.ts. */
  readonly apiVersions?: ApiVersionsSettings
}

export class EmulatorStartError extends Data.TaggedError("EmulatorStartError")<{
  readonly host: string
  readonly port: number
  readonly reason: string
}> {
  override get message() {
    return `emulator could not listen on ${this.host}:${this.port}: ${this.reason}`
  }
}

export interface EmulatorHandle {
  readonly baseUrl: string
  readonly port: number
  readonly admin: EmulatorAdmin
}

export class Emulator extends Context.Tag("account-sync/emulator/Emulator")<Emulator, EmulatorHandle>() {
  static readonly make = (options: EmulatorOptions = {}): Effect.Effect<EmulatorHandle, EmulatorStartError, Scope.Scope> => makeEmulator(options)
  static readonly layer = (options: EmulatorOptions = {}): Layer.Layer<Emulator, EmulatorStartError> => Layer.scoped(Emulator, makeEmulator(options))
}

const makeEmulator = (options: EmulatorOptions): Effect.Effect<EmulatorHandle, EmulatorStartError, Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    // real time always, even when the caller runs under TestClock: emulator time moves only by advanceClock
    const hostClock = Clock.make()
    const runtime = yield* Effect.runtime<never>()
    const runFork = yield* FiberSet.makeRuntime<never>()
    serviceSchema()

    let baseUrl = ""
    const clock = new VirtualClock(() => hostClock.unsafeCurrentTimeMillis())
    const appsAndAccounts = new AppsAndAccounts(clock, () => baseUrl, options.definitions)
    const grants = new Grants(appsAndAccounts, clock)
    const invalidation = new TokenInvalidation(appsAndAccounts, grants)
    const limits = new LimitsBook(options.limits)
    const faults = new FaultInjector()
    if (options.faults) faults.set(options.faults)
    const pagingFaults = new PagingFaults()
    const stats = new StatsCounter()
    const versions = new ApiVersions(clock)
    const approval: Approval = { mode: options.approval?.mode ?? "manual", accountId: options.approval?.accountId }
    const webhooks = new Webhooks((effect) => runFork(Effect.withClock(effect, hostClock)), options.webhookRetry)
    const oauth = new OAuthEndpoints({ appsAndAccounts, grants, clock, baseUrl: () => baseUrl, stats, approval })

    const server = http.createServer()
    server.keepAliveTimeout = 5_000
    const port = yield* Effect.async<number, EmulatorStartError>((resume) => {
      const onError = (e: Error) => resume(Effect.fail(new EmulatorStartError({ host, port: options.port ?? 0, reason: e.message })))
      server.once("error", onError)
      server.listen(options.port ?? 0, host, () => {
        server.off("error", onError)
        resume(Effect.succeed((server.address() as AddressInfo).port))
      })
    })
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
    )
    baseUrl = `http://${host}:${port}`

    const subscriptions = new WebhookSubscriptions(appsAndAccounts, clock)
    const changes = new RecordChanges(clock, (account, change) => webhooks.recordChanged((a, topic) => subscriptions.targets(a, topic), account, change))
    const churn = new Churn(changes, clock)
    const handlers = AdminRpcs.toLayer(adminHandlers({ appsAndAccounts, grants, invalidation, clock, limits, faults, pagingFaults, stats, approval, webhooks, changes, churn, subscriptions, versions }))
    const admin: EmulatorAdmin = yield* Effect.provide(RpcTest.makeClient(AdminRpcs), handlers)
    const adminApp = options.admin
      ? yield* RpcServer.toHttpApp(AdminRpcs).pipe(Effect.provide(Layer.merge(handlers, RpcSerialization.layerJson)))
      : undefined
    const routes = HttpApp.toWebHandlerRuntime(runtime)(makeRoutes({ baseUrl, oauth, admin: adminApp && { path: ADMIN_PATH, app: adminApp } }))

    const route = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
      const url = new URL(req.url ?? "/", baseUrl)
      const method = req.method ?? "GET"
      const path = url.pathname

      if (path === "/api/graphql" || path === "/api/oauth/token") {
        if (method !== "POST") return writeReply(res, jsonReply(405, { error: "method_not_allowed", error_description: `${path} accepts POST only` }))
        const draw = faults.draw()
        if (draw.latencyMs > 0) {
          stats.faultsInjected.latency++
          await new Promise((r) => setTimeout(r, draw.latencyMs))
        }
        const body = await readBody(req)
        if (draw.kind === "error") {
          stats.faultsInjected.error++
          return writeReply(res, { status: draw.status, headers: { "content-type": "text/plain; charset=utf-8" }, body: draw.status === 502 ? "Bad Gateway\n" : "Service temporarily unavailable\n" })
        }
        if (path === "/api/oauth/token") {
          // token faults come before any processing: an injected fault never consumes a code or a rotation
          if (draw.kind === "drop") {
            stats.faultsInjected.drop++
            return void req.socket.destroy()
          }
          if (draw.kind === "truncate") {
            stats.faultsInjected.truncate++
            return writeTruncated(res, jsonReply(200, { access_token: "x".repeat(64), token_type: "Bearer", expires_in: 3600 }))
          }
          return writeReply(res, oauth.token(req.headers, body))
        }
        const reply = await handleGraphql({ appsAndAccounts, grants, invalidation, clock, limits, stats, versions, subscriptions, pagingFaults, beforeQuery: (account, roots) => churn.beforeQuery(account, roots) }, req.headers, body)
        // as in reality, a GraphQL answer can be lost after the query ran (and was charged)
        if (draw.kind === "drop") {
          stats.faultsInjected.drop++
          return void req.socket.destroy()
        }
        if (draw.kind === "truncate") {
          stats.faultsInjected.truncate++
          return writeTruncated(res, reply)
        }
        return writeReply(res, reply)
      }
      // the rest needs no control of the socket: the router, through its web handler
      const body = method === "GET" || method === "HEAD" ? undefined : await readBody(req)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value)
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
      }
      const answer = await routes(new Request(url, { method, headers, ...(body === undefined ? {} : { body }) }))
      return writeReply(res, { status: answer.status, headers: Object.fromEntries(answer.headers), body: await answer.text() })
    }

    server.on("request", (req, res) => {
      route(req, res).catch((e: unknown) => {
        const tooLarge = e instanceof BodyTooLarge
        if (!tooLarge) runFork(Effect.logError(`emulator: ${req.method} ${req.url} failed`, e))
        if (!res.headersSent && !res.destroyed) {
          const reply: Reply = jsonReply(tooLarge ? 413 : 500, { error: tooLarge ? "payload_too_large" : "internal_error", error_description: e instanceof Error ? e.message : String(e) })
          writeReply(res, reply)
        }
      })
    })

    if (options.apiVersions) yield* admin.setApiVersions(options.apiVersions).pipe(Effect.orDie)
    for (const spec of options.apps ?? []) yield* admin.createApp(spec).pipe(Effect.orDie)
    for (const spec of options.accounts ?? []) yield* admin.createAccount(spec).pipe(Effect.orDie)
    return { baseUrl, port, admin }
  })

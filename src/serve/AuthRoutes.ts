import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Duration, Effect, Either, Option, Schema } from "effect"
import { AnonymousLimits } from "../auth/AnonymousLimits.js"
import { EventInbox, signatureHeader } from "../changes/EventInbox.js"
import type { AuthorizationError } from "../auth/errors.js"
import { callbackParams, OAuthFlow } from "../auth/OAuthFlow.js"
import { page } from "./Pages.js"
import { readBodyUpTo } from "./requestBody.js"
import { webhookAnswer } from "./webhookAnswer.js"
import { webhookBodyLimit } from "./webhookFastPath.js"
import { sqlFileLoader } from "../db/Migrations.js"
import { rowsOrDie } from "../db/rows.js"
import { contentType as prometheusContentType, prometheusText } from "../observability/prometheus.js"

const requestUrl = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://localhost")

/**
 * The client's address: the peer's, or behind a reverse proxy (HTTP_TRUST_PROXY=true) the last X-Forwarded-For
 * entry, the one our proxy added (the ones before it are the client's to write).
 */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustForwardedFor: boolean): string => {
  const forwarded = trustForwardedFor ? request.headers["x-forwarded-for"]?.split(",").at(-1)?.trim() : undefined
  return forwarded || Option.getOrElse(request.remoteAddress, () => "unknown")
}

/** Anonymous routes take one request of the client address's budget (OAUTH_RATE_LIMIT a minute) first. */
const rateLimited = <A, E, R>(handler: (address: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const limits = yield* AnonymousLimits
    const address = clientAddress(request, limits.settings.trustForwardedFor)
    const taken = yield* Effect.either(limits.take(address))
    if (Either.isRight(taken)) return yield* handler(address)
    yield* Effect.logWarning(`oauth route refused: ${taken.left.message}`)
    return page(429, "Too many requests", "Too many connection attempts from your address; please wait a minute and try again.", {
      "retry-after": String(Math.max(1, Math.ceil(Duration.toSeconds(taken.left.retryAfter))))
    })
  })

/** `GET /oauth/start`: a fresh flow (PKCE unless the app opted out: SERVICE_PKCE), kept in the database, and a redirect to the service. */
const start = (address: string) =>
  Effect.gen(function* () {
    const flow = yield* OAuthFlow
    const url = yield* flow.beginStored(address)
    return HttpServerResponse.redirect(url, { status: 302, headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" } })
  }).pipe(
    Effect.catchTag("PendingFlowsFull", (e) =>
      Effect.logWarning(`oauth start refused: ${e.message}`).pipe(
        Effect.as(
          e.address === undefined
            ? page(503, "Try again later", "Too many connections are being started right now; please try again in a few minutes.", { "retry-after": "60" })
            : page(429, "Too many requests", "Too many connections were started from your address; finish one, or try again in a few minutes.", {
                "retry-after": "60"
              })
        )
      )
    ),
    Effect.catchAll((error) =>
      Effect.logError("oauth start failed", error).pipe(Effect.as(page(500, "Cannot start", "The connection could not be started; see the server log.")))
    )
  )

const callbackFailure = (error: AuthorizationError | { readonly _tag: "SqlError" }) => {
  switch (error._tag) {
    case "AuthorizationDenied":
      return { status: 403, title: "Not connected", text: "Access was not granted, so nothing was connected." }
    case "UnknownState":
    case "PendingFlowExpired":
    case "MalformedCallback":
      return { status: 400, title: "Cannot complete the connection", text: `${error.message}.` }
    case "CodeExchangeRefused":
      return { status: 400, title: "Cannot complete the connection", text: "The service refused the authorization code; please connect again." }
    case "ClientMisconfigured":
      return { status: 500, title: "Configuration error", text: "The service rejected this app's client credentials; the operator must fix them." }
    case "TokenKeyMismatch":
    case "TokenUnreadable":
      return { status: 500, title: "Configuration error", text: "The token encryption key does not match the stored data; the operator must fix it." }
    case "SqlError":
      return { status: 500, title: "Internal error", text: "The connection could not be stored; see the server log and try again." }
    default:
      return { status: 502, title: "Service unavailable", text: "The service could not be reached to complete the connection; please try again." }
  }
}

/** `GET /oauth/callback`: flows begun at /oauth/start (state) or from the marketplace (no state, no PKCE). */
const callback = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const flow = yield* OAuthFlow
  return yield* flow.completeStored(callbackParams(requestUrl(request))).pipe(
    Effect.map((c) => page(200, "Connected", `${c.accountName} (${c.accountId}) is connected. You can close this page.`)),
    Effect.catchAll((error) => {
      const { status, title, text } = callbackFailure(error)
      const log = status >= 500 ? Effect.logError(`oauth callback failed: ${error.message}`) : Effect.logWarning(`oauth callback rejected: ${error.message}`)
      return Effect.as(log, page(status, title, text))
    })
  )
})

/** `POST /webhooks`: verified over the raw body bytes, recorded once (the change it names is applied by the consumer); 2xx only when stored. */
const webhooks = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const events = yield* EventInbox
  // an event is a few hundred bytes: refuse anything large (413) before reading it
  const body = yield* readBodyUpTo(request, webhookBodyLimit)
  return yield* events.receive(body, request.headers[signatureHeader])
}).pipe(
  Effect.exit,
  Effect.map((exit) => {
    const answer = webhookAnswer(exit)
    return HttpServerResponse.unsafeJson(answer.body, { status: answer.status })
  })
)

/** Ready: the database answers and holds every migration this build ships. */
const LatestMigration = Schema.Struct({ latest: Schema.NullOr(Schema.Number) })

const readyz = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const shipped = yield* Effect.map(sqlFileLoader(), (files) => Math.max(0, ...files.map(([id]) => id)))
  const latestMigration = SqlSchema.single({
    Request: Schema.Void,
    Result: LatestMigration,
    execute: () => sql`SELECT max(migration_id)::int AS latest FROM schema_migrations`
  })
  const latest = (yield* rowsOrDie(latestMigration(undefined))).latest ?? 0
  return latest >= shipped
    ? HttpServerResponse.text("ready\n")
    : HttpServerResponse.text(`migrations pending: database at ${latest}, this build ships ${shipped}\n`, { status: 503 })
}).pipe(
  Effect.timeout("2 seconds"),
  Effect.catchAll((e) =>
    Effect.logWarning("not ready: database unreachable", e).pipe(
      Effect.as(HttpServerResponse.text("database unreachable\n", { status: 503 }))
    )
  )
)

const metrics = Effect.map(prometheusText, (text) =>
  HttpServerResponse.text(text, { contentType: prometheusContentType })
)

/** The path the service redirects to: the callback route for a redirect URI whose path is not /oauth/callback. */
export const callbackPath = "/oauth/callback"

/** serve's public routes: connecting accounts, the webhooks, and liveness. */
export const publicRouter = HttpRouter.empty.pipe(
  HttpRouter.get("/healthz", HttpServerResponse.text("ok\n")),
  HttpRouter.get("/oauth/start", rateLimited(start)),
  HttpRouter.get(callbackPath, rateLimited(() => callback)),
  HttpRouter.post("/webhooks", webhooks)
)

/** Liveness, readiness and Prometheus metrics: on METRICS_PORT when it is set, for deployments that keep them private. */
export const probesRouter = HttpRouter.empty.pipe(
  HttpRouter.get("/healthz", HttpServerResponse.text("ok\n")),
  HttpRouter.get("/readyz", readyz),
  HttpRouter.get("/metrics", metrics)
)

/** Every serve route on one port (METRICS_PORT unset). */
export const authRouter = publicRouter.pipe(HttpRouter.get("/readyz", readyz), HttpRouter.get("/metrics", metrics))

/** The same callback handler under another path (the path of SERVICE_REDIRECT_URI when it differs). */
export const withCallbackAt = (path: string) => <E, R>(router: HttpRouter.HttpRouter<E, R>) =>
  path === callbackPath ? router : router.pipe(HttpRouter.get(path as `/${string}`, rateLimited(() => callback)))

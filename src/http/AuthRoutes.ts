import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EventInbox, signatureHeader } from "../auth/EventInbox.js"
import type { AuthorizationError } from "../auth/errors.js"
import { callbackParams, OAuthFlow } from "../auth/OAuthFlow.js"
import { page } from "./Pages.js"
import { readBodyUpTo } from "./requestBody.js"
import { sqlFileLoader } from "../db/Migrations.js"
import { contentType as prometheusContentType, prometheusText } from "../observability/prometheus.js"

const requestUrl = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://localhost")

/** `GET /oauth/start[?pkce=false]`: a fresh flow, kept in the database, and a redirect to the service. */
const start = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const pkce = requestUrl(request).searchParams.get("pkce") !== "false"
  const flow = yield* OAuthFlow
  const url = yield* flow.beginStored({ pkce })
  return HttpServerResponse.redirect(url, { status: 302, headers: { "cache-control": "no-store" } })
}).pipe(
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

/** The largest webhook body taken (an event is a few hundred bytes). */
export const webhookBodyLimit = 64 * 1024

/** `POST /webhooks`: verified over the raw body bytes, recorded once (the change it names is applied by the consumer); 2xx only when stored. */
const webhooks = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const events = yield* EventInbox
  // an event is a few hundred bytes: refuse anything large (413) before reading it
  const body = yield* readBodyUpTo(request, webhookBodyLimit)
  const header = request.headers[signatureHeader]
  const outcome = yield* events.receive(body, header)
  return yield* HttpServerResponse.json({ ok: true, outcome: outcome._tag })
}).pipe(
  Effect.catchTags({
    WebhookSignatureInvalid: () => HttpServerResponse.json({ ok: false, error: "invalid signature" }, { status: 401 }),
    WebhookMalformed: (e) => HttpServerResponse.json({ ok: false, error: e.reason }, { status: 400 }),
    WebhookForeignApp: () => HttpServerResponse.json({ ok: false, error: "appId is not this app's" }, { status: 403 }),
    BodyTooLarge: (e) => HttpServerResponse.json({ ok: false, error: e.message }, { status: 413 }),
    BodyUnreadable: () => HttpServerResponse.json({ ok: false, error: "cannot read the body" }, { status: 400 })
  }),
  Effect.catchAll(() => HttpServerResponse.json({ ok: false, error: "not stored; retry later" }, { status: 500 }))
)

/** Ready: the database answers and holds every migration this build ships. */
const readyz = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const shipped = yield* Effect.map(sqlFileLoader(), (files) => Math.max(0, ...files.map(([id]) => id)))
  const [row] = yield* sql<{ latest: number | null }>`SELECT max(migration_id) AS latest FROM schema_migrations`
  const latest = row?.latest ?? 0
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
  HttpRouter.get("/oauth/start", start),
  HttpRouter.get(callbackPath, callback),
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
  path === callbackPath ? router : router.pipe(HttpRouter.get(path as `/${string}`, callback))

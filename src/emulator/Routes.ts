import { type HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, type Scope } from "effect"
import { jsonReply, type Reply } from "./Http.js"
import type { OAuthEndpoints } from "./OAuthEndpoints.js"

/**
 * The emulator's routes that need no control of the socket (the OAuth pages, the marketplace listing, the admin API,
 * the index): an @effect/platform router. The GraphQL and token endpoints stay on the raw node:http server because
 * their faults drop the connection or cut a body short.
 */

const respond = (reply: Reply): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...headers } = reply.headers
  return HttpServerResponse.text(reply.body, { status: reply.status, headers, ...(contentType === undefined ? {} : { contentType }) })
}

const searchParams = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://emulator").searchParams)
const formBody = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.map(request.text, (body) => new URLSearchParams(body)))

export interface RoutesOptions {
  readonly baseUrl: string
  readonly oauth: OAuthEndpoints
  /** The admin API's RPC app, served at ADMIN_PATH when the emulator runs with --admin. */
  readonly admin: { readonly path: HttpRouter.PathInput; readonly app: HttpApp.Default<never, Scope.Scope> } | undefined
}

/**
 * Why a request to the admin API is refused, or undefined: only a local program may drive it, never a web page the
 * developer has open. A browser marks a cross-origin request with `Origin`; a page can send `text/plain` (a "simple"
 * request, no preflight) but not `application/json`; and a page reaching it by DNS rebinding names its own host.
 */
export const adminRefusal = (
  headers: Readonly<Record<string, string | undefined>>,
  port: string
): { readonly status: number; readonly error: string; readonly description: string } | undefined => {
  const host = headers["host"] ?? ""
  if (![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase())) {
    return { status: 403, error: "forbidden_host", description: `the admin API answers requests for 127.0.0.1:${port} or localhost:${port} only` }
  }
  if (headers["origin"] !== undefined) return { status: 403, error: "forbidden_origin", description: "the admin API refuses requests from web pages (Origin)" }
  const contentType = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (contentType !== "application/json") {
    return { status: 415, error: "unsupported_media_type", description: "the admin API takes Content-Type: application/json only" }
  }
  return undefined
}

export const makeRoutes = (options: RoutesOptions): HttpApp.Default<never, Scope.Scope> => {
  const { oauth, admin } = options
  const pages = HttpRouter.empty.pipe(
    HttpRouter.get("/api/oauth/authorize", Effect.map(searchParams, (query) => respond(oauth.authorize(query)))),
    HttpRouter.post("/api/oauth/authorize", Effect.map(Effect.orDie(formBody), (form) => respond(oauth.decide(form)))),
    HttpRouter.get("/marketplace/apps/:appId", Effect.map(HttpRouter.params, (params) => respond(oauth.marketplaceListing(params.appId ?? "")))),
    HttpRouter.get("/", Effect.succeed(respond(jsonReply(200, { service: "account-sync emulator", baseUrl: options.baseUrl, admin: admin !== undefined }))))
  )
  const withAdmin: HttpRouter.HttpRouter<never, Scope.Scope> =
    admin === undefined
      ? pages
      : pages.pipe(
          HttpRouter.post(
            admin.path,
            Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
              const refused = adminRefusal(request.headers, new URL(options.baseUrl).port)
              return refused === undefined ? admin.app : Effect.succeed(respond(jsonReply(refused.status, { error: refused.error, error_description: refused.description })))
            })
          ),
          HttpRouter.get(admin.path, Effect.succeed(respond(jsonReply(405, { error: "method_not_allowed", error_description: `${admin.path} accepts POST only` }))))
        )
  return withAdmin.pipe(
    Effect.catchTag("RouteNotFound", (e) =>
      Effect.succeed(respond(jsonReply(404, { error: "not_found", error_description: `${e.request.method} ${new URL(e.request.url, "http://emulator").pathname} is not served` })))
    )
  )
}

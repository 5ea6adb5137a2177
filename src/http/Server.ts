import { type HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import { authRouter, withCallbackAt } from "./AuthRoutes.js"

export interface ListenOptions {
  readonly port: number
  readonly host: string
}

/** A Node HTTP server for `router` on host:port (0: any free port; see `HttpServer.address`); closed with its scope. */
export const serveRouter = <E, R>(router: HttpRouter.HttpRouter<E, R>, options: ListenOptions) =>
  HttpServer.serve(router).pipe(
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layerServer(() => createServer(), { port: options.port, host: options.host }))
  )

/**
 * serve's server with `router` (e.g. `authRouter.pipe(HttpRouter.get("/metrics", ...))`), plus the redirect URI's
 * own path when it is not /oauth/callback.
 */
export const authServerWith = <E, R>(router: HttpRouter.HttpRouter<E, R>, options: ListenOptions & { readonly redirectPath?: string }) =>
  serveRouter(options.redirectPath ? router.pipe(withCallbackAt(options.redirectPath)) : router, options)

/** serve's server with the auth routes. */
export const authServer = (options: ListenOptions & { readonly redirectPath?: string }) => authServerWith(authRouter, options)

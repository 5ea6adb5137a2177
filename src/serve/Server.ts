import { type HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { type IncomingMessage, Server, type ServerOptions, type ServerResponse } from "node:http"
import { type HttpLimits, HttpLimitsConfig } from "../config.js"
import { authRouter, probesRouter, publicRouter, withCallbackAt } from "./AuthRoutes.js"
import { type RequestClaim, webhookFastPath } from "./webhookFastPath.js"

export interface ListenOptions {
  readonly port: number
  readonly host: string
  /** The server's limits (default: `defaultHttpLimits`, HttpLimitsConfig's defaults). */
  readonly limits?: HttpLimits
}

/** HttpLimitsConfig's defaults: HTTP_REQUEST_TIMEOUT, HTTP_HEADERS_TIMEOUT, HTTP_KEEP_ALIVE_TIMEOUT, HTTP_MAX_CONNECTIONS unset. */
export const defaultHttpLimits: HttpLimits = Effect.runSync(Effect.withConfigProvider(HttpLimitsConfig, ConfigProvider.fromMap(new Map())))

/** A Node server whose requests `claim` may take before its 'request' listeners (the platform's router) see them. */
class ClaimingServer extends Server {
  constructor(
    options: ServerOptions,
    private readonly claim: RequestClaim
  ) {
    super(options)
  }
  override emit(event: string, ...args: Array<any>): boolean {
    if (event === "request" && this.claim(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
    return super.emit(event, ...args)
  }
}

/**
 * A Node HTTP server with `limits`: a request must arrive whole within requestTimeout and its headers within
 * headersTimeout (else 408 and the connection is closed: slow clients cannot hold connections open), an idle
 * kept-alive connection is closed after keepAliveTimeout, and connections beyond maxConnections are refused.
 */
export const makeNodeServer = (limits: HttpLimits, claim?: RequestClaim): Server => {
  const requestTimeout = Duration.toMillis(limits.requestTimeout)
  const headersTimeout = Duration.toMillis(limits.headersTimeout)
  const options: ServerOptions = {
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: Duration.toMillis(limits.keepAliveTimeout),
    // how often Node looks for requests past those limits (its default, 30 s, would let them run that much longer)
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 2)))
  }
  const server = claim === undefined ? new Server(options) : new ClaimingServer(options, claim)
  server.requestTimeout = requestTimeout
  server.headersTimeout = headersTimeout
  server.keepAliveTimeout = Duration.toMillis(limits.keepAliveTimeout)
  server.maxConnections = limits.maxConnections
  return server
}

/**
 * Connections the kernel holds for the server before it accepts them (capped by net.core.somaxconn). Node's 511 filled
 * while the loop was busy under a burst of deliveries on new connections: the kernel dropped the SYNs beyond it and each
 * sender waited for its SYN to be sent again (1 s, then 3 s), seconds the receiver never saw.
 */
export const listenBacklog = 4096

/**
 * A Node HTTP server for `router` on host:port (0: any free port; see `HttpServer.address`); closed with its scope.
 * `claims` may give a handler that takes some requests before the router (`RequestClaim`).
 */
export const serveRouter = <E, R, RC = never>(
  router: HttpRouter.HttpRouter<E, R>,
  options: ListenOptions,
  claims: Effect.Effect<RequestClaim | undefined, never, RC> = Effect.succeed(undefined)
) =>
  HttpServer.serve(router).pipe(
    HttpServer.withLogAddress,
    Layer.provideMerge(
      Layer.unwrapEffect(
        Effect.map(claims, (claim) =>
          NodeHttpServer.layerServer(() => makeNodeServer(options.limits ?? defaultHttpLimits, claim), { port: options.port, host: options.host, backlog: listenBacklog })
        )
      )
    )
  )

export interface AuthServerOptions extends ListenOptions {
  /** The redirect URI's own path, when it is not /oauth/callback. */
  readonly redirectPath?: string
  /** When set, /metrics and /readyz are served here (with /healthz) and not on `port`. */
  readonly metricsPort?: number
}

/**
 * serve's server with `router` (e.g. `authRouter.pipe(HttpRouter.get("/metrics", ...))`), plus the redirect URI's
 * own path when it is not /oauth/callback.
 */
export const authServerWith = <E, R>(router: HttpRouter.HttpRouter<E, R>, options: ListenOptions & { readonly redirectPath?: string }) =>
  serveRouter(options.redirectPath ? router.pipe(withCallbackAt(options.redirectPath)) : router, options, webhookFastPath)

/**
 * serve's servers: the public routes (connecting accounts, webhooks, /healthz) and the probes and metrics, on one
 * port, or (with `metricsPort`) the probes and metrics on their own port, for deployments that keep them private.
 */
export const authServer = (options: AuthServerOptions) =>
  options.metricsPort === undefined
    ? authServerWith(authRouter, options)
    : Layer.merge(authServerWith(publicRouter, options), serveRouter(probesRouter, { ...options, port: options.metricsPort }))

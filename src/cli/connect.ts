import { Command, Options } from "@effect/cli"
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Console, Deferred, Duration, Effect, Exit, Layer } from "effect"
import { AuthLayer } from "./app.js"
import type { Connection } from "../auth/Connections.js"
import { safeEqual } from "../auth/Authorization.js"
import { callbackParams, OAuthFlow } from "../auth/OAuthFlow.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { page } from "../http/Pages.js"
import { serveRouter } from "../http/Server.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"

const timeout = Options.integer("timeout").pipe(
  Options.withDescription("Seconds to wait for the redirect (default 600: the authorization code lifetime)"),
  Options.withDefault(600)
)
const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const noPkce = Options.boolean("no-pkce").pipe(
  Options.withDescription("Leave PKCE out (only for apps that opted out of it; SERVICE_PKCE=false does the same for every flow)")
)

/**
 * One connect flow in this process: print the authorization URL, listen on SERVICE_REDIRECT_URI's host, port and
 * path, and finish on the redirect whose state is ours. Redirects with another state are answered and ignored.
 */
export const connectOnce = (options: { readonly timeout: Duration.Duration; readonly pkce: boolean }) =>
  Effect.gen(function* () {
    const settings = yield* OAuthClient
    const flow = yield* OAuthFlow
    const expected = yield* flow.begin({ pkce: options.pkce })
    const redirect = new URL(settings.redirectUri)
    const done = yield* Deferred.make<Connection, ExitWith>()
    let busy = false

    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = callbackParams(new URL(request.url, redirect))
      // only a redirect carrying this flow's state can end it, an `error=` one included: anyone who can reach the
      // port could otherwise end the flow with a forged error
      if (params.state === undefined || !safeEqual(params.state, expected.state)) {
        yield* Effect.logWarning(
          `ignored a${params.error === undefined ? "" : "n error"} redirect whose state is not this flow's (${params.state === undefined ? "no state" : "state mismatch"})`
        )
        return page(400, "Wrong flow", "This redirect does not belong to the connection this command started (state mismatch).")
      }
      if (busy) return page(409, "Already handled", "This connection flow was already completed or is in progress.")
      busy = true
      const exit = yield* Effect.exit(flow.completeExpected(expected, params))
      if (Exit.isSuccess(exit)) {
        yield* Deferred.succeed(done, exit.value)
        return page(200, "Connected", `${exit.value.accountName} (${exit.value.accountId}) is connected. You can close this page.`)
      }
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      const message = error ? error.message : "unexpected failure; see the log"
      yield* Deferred.fail(done, new ExitWith({ code: ExitCodes.failure, message: `connect: ${message}` }))
      return error?._tag === "AuthorizationDenied"
        ? page(403, "Not connected", "Access was not granted, so nothing was connected.")
        : page(400, "Cannot complete the connection", message)
    })

    const port = redirect.port ? Number(redirect.port) : redirect.protocol === "https:" ? 443 : 80
    const host = redirect.hostname.replace(/^\[|\]$/g, "")
    const router = HttpRouter.empty.pipe(HttpRouter.get(redirect.pathname as `/${string}`, handler))
    yield* Layer.buildWithScope(serveRouter(router, { port, host }), yield* Effect.scope).pipe(
      Effect.catchTag("ServeError", (e) =>
        Effect.fail(
          new ExitWith({ code: ExitCodes.failure, message: `connect: cannot listen on ${host}:${port} (from SERVICE_REDIRECT_URI): ${describe(e.cause)}` })
        )
      )
    )
    yield* Console.log(expected.url)
    yield* Console.error(`open the URL above in a browser; waiting for the redirect on ${redirect.origin}${redirect.pathname}`)
    const connection = yield* Deferred.await(done).pipe(
      Effect.timeoutFail({
        duration: options.timeout,
        onTimeout: () =>
          new ExitWith({
            code: ExitCodes.failure,
            message: `connect: no authorization arrived within ${Duration.format(options.timeout)} (denied or abandoned); nothing was connected`
          })
      })
    )
    yield* Console.log(`connected ${connection.accountName} (${connection.accountId})`)
    return connection
  }).pipe(Effect.scoped)

export const connectCommand = Command.make("connect", { timeout, noPkce }, (options) =>
  Effect.flatMap(OAuthClient, (settings) =>
    // PKCE unless the app opted out (SERVICE_PKCE=false) or the operator says so here
    connectOnce({ timeout: Duration.seconds(options.timeout), pkce: settings.pkce && !options.noPkce })
  ).pipe(Effect.provide(AuthLayer))
).pipe(
  Command.withDescription(
    "Connect an account: prints the authorization URL, waits for the redirect on SERVICE_REDIRECT_URI, stores the tokens."
  )
)

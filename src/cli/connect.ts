import { Command, Options } from "@effect/cli"
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Console, Deferred, Duration, Effect, Exit, FiberRef, Layer, Logger, LogLevel, Option } from "effect"
import { AuthLayer } from "./app.js"
import type { Connection } from "../auth/Connections.js"
import { newState, safeEqual } from "../auth/Authorization.js"
import { callbackParams, OAuthFlow } from "../auth/OAuthFlow.js"
import { OAuthClient } from "../auth/OAuthClient.js"
import { page } from "../serve/Pages.js"
import { serveRouter } from "../serve/Server.js"
import { printable } from "../observability/printable.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { enqueuingLayer } from "../jobs/JobQueue.js"
import { withHelp, withShownDefault } from "./help.js"
import { checkAtLeast } from "./optionChecks.js"
import { openInBrowser } from "./openBrowser.js"

const timeout = Options.integer("timeout").pipe(
  Options.withPseudoName("SECONDS"),
  Options.withDescription("How long to wait for the redirect"),
  withShownDefault(600, "600, the authorization code's lifetime")
)
const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const loginHint = Options.text("login-hint").pipe(
  Options.withPseudoName("ID"),
  Options.optional,
  Options.withDescription("Which account or admin to log in as (OAuth login_hint: an account id, an admin's user id or email), added to the URL")
)
const open = Options.boolean("open").pipe(Options.withDescription("Open the URL in this machine's browser too (open, xdg-open or start; without one, only the URL is printed)"))

const noPkce = Options.boolean("no-pkce").pipe(
  Options.withDescription("Leave PKCE out (only for apps that opted out of it; SERVICE_PKCE=false does the same for every flow)")
)

/**
 * One connect flow in this process: print the authorization URL, listen on SERVICE_REDIRECT_URI's host, port and
 * path, and finish on the redirect whose state is ours. Redirects with another state are answered and ignored.
 */
export const connectOnce = (options: {
  readonly timeout: Duration.Duration
  readonly pkce: boolean
  readonly loginHint?: string
  readonly open?: boolean
}) =>
  Effect.gen(function* () {
    const settings = yield* OAuthClient
    const flow = yield* OAuthFlow
    const begun = yield* flow.begin({ pkce: options.pkce })
    const expected = options.loginHint === undefined ? begun : { ...begun, url: withLoginHint(begun.url, options.loginHint) }
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
      const exit = yield* Effect.exit(quietOnTerminal(flow.completeExpected(expected, params)))
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
    const refused = yield* refusalOfAuthorization(expected.url, settings.redirectUri)
    if (refused !== undefined) return yield* refused
    yield* Console.log(expected.url)
    const notOpened = options.open === true ? yield* openInBrowser(expected.url) : "not asked"
    yield* Console.error(
      notOpened === undefined
        ? `opened the URL above in the browser; waiting for the redirect on ${redirect.origin}${redirect.pathname}`
        : `${options.open === true ? `${notOpened}: ` : ""}open the URL above in a browser; waiting for the redirect on ${redirect.origin}${redirect.pathname}`
    )
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
    yield* Console.log(printable(`connected ${connection.accountName} (${connection.accountId})`, 500))
    return connection
  }).pipe(Effect.scoped)

/** The authorization URL with OAuth's login_hint: which account or admin the service should log in. */
const withLoginHint = (url: string, hint: string) => {
  const hinted = new URL(url)
  hinted.searchParams.set("login_hint", hint)
  return hinted.toString()
}

/**
 * On a terminal, the flow's own info line (`connected <name> (<id>)`) is left out: the command prints the same words on
 * stdout just below it. Piped, or at another log level, the log keeps it.
 */
const quietOnTerminal = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  process.stderr.isTTY !== true
    ? self
    : Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (level) => (level === LogLevel.Info ? Logger.withMinimumLogLevel(self, LogLevel.Warning) : self))

/** How long the check of the authorization URL may take. */
const probeTimeoutMs = 10_000

/** An error page's words: its paragraphs (else its body) without markup, made safe for a terminal, cut short. */
const pageText = (html: string) => {
  const text = (part: string) => part.replace(/<[^>]+>/g, " ").replace(/&[a-z#0-9]+;/gi, " ").replace(/\s+/g, " ").trim()
  const body = html.replace(/<(head|script|style)[\s\S]*?<\/\1>/gi, " ")
  const paragraphs = [...body.matchAll(/<p[^>]*>([\s\S]*?)<\/p>/gi)].map((m) => text(m[1]!)).filter((p) => p.length > 0)
  return printable(paragraphs.length > 0 ? paragraphs.join(" ") : text(body), 200)
}

/**
 * Asks the authorization URL once, as a browser would but without following it, with a state no redirect can
 * complete: a service that refuses the request outright (its redirect_uri is not the app's callback, an unknown
 * client id) answers with an error page instead of a login or a redirect, and `connect` says so at once instead of
 * waiting out its timeout. Any other answer (a login page, a redirect), or no answer, lets the flow go on.
 */
export const refusalOfAuthorization = (authorizationUrl: string, redirectUri: string) =>
  Effect.gen(function* () {
    const probe = new URL(authorizationUrl)
    probe.searchParams.set("state", newState())
    const answer = yield* Effect.tryPromise(async () => {
      const response = await fetch(probe, { redirect: "manual", signal: AbortSignal.timeout(probeTimeoutMs) })
      return { status: response.status, body: response.status >= 400 && response.status < 500 ? await response.text() : "" }
    }).pipe(Effect.option)
    if (Option.isNone(answer) || answer.value.status < 400 || answer.value.status >= 500) return undefined
    const words = pageText(answer.value.body)
    const hint = /redirect/i.test(words)
      ? `; SERVICE_REDIRECT_URI (${redirectUri}) must be the app's OAuth Callback URL, character for character`
      : /client/i.test(words)
        ? "; check SERVICE_CLIENT_ID"
        : ""
    return new ExitWith({
      code: ExitCodes.usage,
      message: `connect: the service refused the authorization request (HTTP ${answer.value.status}: ${words || "no message"})${hint}; nothing was connected`
    })
  })

export const connectCommand = withHelp(Command.make("connect", { timeout, loginHint, open, noPkce }, (options) =>
  Effect.gen(function* () {
    const bad = checkAtLeast("--timeout", options.timeout, 1, " of seconds")
    if (bad !== undefined) return yield* bad
    const hint = Option.getOrUndefined(options.loginHint)
    if (hint !== undefined && hint.trim() === "") return yield* new ExitWith({ code: ExitCodes.usage, message: "connect --login-hint: expected an account id, a user id or an email, got an empty value" })
    return yield* Effect.flatMap(OAuthClient, (settings) =>
      // PKCE unless the app opted out (SERVICE_PKCE=false) or the operator says so here
      connectOnce({
        timeout: Duration.seconds(options.timeout),
        pkce: settings.pkce && !options.noPkce,
        ...(hint === undefined ? {} : { loginHint: hint }),
        open: options.open
      })
    ).pipe(
      // with workers (WORKERS=true) the new connection's backfill job is enqueued at once
      Effect.provide(enqueuingLayer),
      Effect.catchTag("QueueUnavailable", (e) => Effect.fail(new ExitWith({ code: ExitCodes.usage, message: `connect: WORKERS=true: ${e.message}` }))),
      Effect.provide(AuthLayer)
    )
  })
), {
  purpose: "Connect one account from a terminal through the service's OAuth flow.",
  details:
    "Prints the authorization URL and waits for the redirect on the host, port and path of SERVICE_REDIRECT_URI: open the URL, log in as an admin of the account and choose Allow Access; the tokens are stored encrypted and it prints `connected <name> (<id>)`. A service that refuses the request (SERVICE_REDIRECT_URI not the app's callback, an unknown client id) is said at once.",
  examples: ["account-sync connect", "account-sync connect --open", "account-sync connect --login-hint Z2lkOi8vc2VydmljZS9BY2NvdW50LzI= --timeout 120"]
})

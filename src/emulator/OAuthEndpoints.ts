import { Either } from "effect"
import * as crypto from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import type { Account, App, AppsAndAccounts } from "./AppsAndAccounts.js"
import type { OAuthFailure } from "./errors.js"
import { CODE_TTL_SECONDS, type Grants } from "./Grants.js"
import { htmlReply, jsonReply, redirectReply, type Reply } from "./Http.js"
import { consentPage, deniedPage, errorPage, marketplacePage } from "./Pages.js"
import type { StatsCounter } from "./Stats.js"
import type { VirtualClock } from "./VirtualClock.js"

/** `GET/POST /api/oauth/authorize` (login + consent, or auto-approve) and `POST /api/oauth/token`. */

export interface Approval {
  mode: "auto" | "manual"
  accountId: string | undefined
}

interface PendingAuthorization {
  readonly app: App
  readonly redirectUri: string
  readonly state: string | undefined
  readonly codeChallenge: string | undefined
  /** The marketplace's Connect button sends neither state nor PKCE; a denial then returns to the listing. */
  readonly fromMarketplace: boolean
  readonly expiresAtMs: number
}

export interface OAuthDeps {
  readonly appsAndAccounts: AppsAndAccounts
  readonly grants: Grants
  readonly clock: VirtualClock
  /** The emulator's address (known once it listens), for the marketplace listing's URL. */
  readonly baseUrl: () => string
  readonly stats: StatsCounter
  readonly approval: Approval
}

export class OAuthEndpoints {
  private readonly pending = new Map<string, PendingAuthorization>()

  constructor(private readonly deps: OAuthDeps) {}

  marketplaceUrl(app: App): string {
    return `${this.deps.baseUrl()}/marketplace/apps/${encodeURIComponent(app.appId)}`
  }

  marketplaceListing(appId: string): Reply {
    const app = this.deps.appsAndAccounts.apps.get(appId)
    return app ? htmlReply(200, marketplacePage(app)) : htmlReply(404, errorPage("No such app in the marketplace"))
  }

  authorize(query: URLSearchParams): Reply {
    const { appsAndAccounts, clock, approval } = this.deps
    const clientId = query.get("client_id")
    const app = clientId ? appsAndAccounts.appByClientId(clientId) : undefined
    if (!app) return htmlReply(400, errorPage(clientId ? "Unknown client_id: no app has this client ID." : "client_id is required."))
    const redirectUri = query.get("redirect_uri")
    if (!redirectUri || redirectUri !== app.redirectUri) {
      return htmlReply(400, errorPage("redirect_uri does not match the OAuth Callback URL configured on the app."))
    }
    const state = query.get("state") ?? undefined
    const back = (error: string, description: string) => redirectReply(withParams(redirectUri, { error, error_description: description, state }))
    if (query.get("response_type") !== "code") return back("unsupported_response_type", "response_type must be code")
    const challenge = query.get("code_challenge") ?? undefined
    const method = query.get("code_challenge_method") ?? undefined
    if (method !== undefined && challenge === undefined) return back("invalid_request", "code_challenge_method given without code_challenge")
    if (challenge !== undefined) {
      if (method === undefined) return back("invalid_request", "code_challenge_method is required with code_challenge")
      if (method !== "S256") return back("invalid_request", "only the S256 code_challenge_method is supported")
      if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return back("invalid_request", "code_challenge must be a base64url SHA-256 hash without padding")
    }
    const loginHint = query.get("login_hint") ?? undefined
    if (loginHint !== undefined && !appsAndAccounts.findAccount(loginHint)) {
      return htmlReply(400, errorPage(`login_hint: no account or admin user ${loginHint}`))
    }
    const request: PendingAuthorization = {
      app,
      redirectUri,
      state,
      codeChallenge: challenge,
      fromMarketplace: state === undefined && challenge === undefined,
      expiresAtMs: clock.nowMs() + CODE_TTL_SECONDS * 1000
    }
    if (approval.mode === "auto") {
      const account = this.approvingAccount(loginHint)
      if (!account) return htmlReply(400, errorPage("auto-approve: the emulator has no account to approve with"))
      return this.approve(request, account)
    }
    this.prune()
    const requestId = crypto.randomBytes(16).toString("base64url")
    this.pending.set(requestId, request)
    const selected = loginHint ? appsAndAccounts.findAccount(loginHint)?.accountId : approval.accountId
    return htmlReply(200, consentPage({ requestId, app, accounts: [...appsAndAccounts.accounts.values()], ...(selected ? { selected } : {}) }))
  }

  /** The consent form's answer: Allow Access (with the chosen admin's login) or Deny. */
  decide(form: URLSearchParams): Reply {
    const requestId = form.get("request_id") ?? ""
    const request = this.pending.get(requestId)
    if (!request || request.expiresAtMs <= this.deps.clock.nowMs()) {
      return htmlReply(400, errorPage("This authorization request is unknown or has expired; start again from the app."))
    }
    const decision = form.get("decision")
    if (decision === "deny") {
      this.pending.delete(requestId)
      return request.fromMarketplace ? redirectReply(this.marketplaceUrl(request.app)) : htmlReply(200, deniedPage(request.app))
    }
    if (decision !== "allow") return htmlReply(400, errorPage("decision must be allow or deny"))
    const login = form.get("login") ?? ""
    const account = this.deps.appsAndAccounts.findAccount(login)
    if (!account) {
      return htmlReply(
        401,
        consentPage({ requestId, app: request.app, accounts: [...this.deps.appsAndAccounts.accounts.values()], error: `Unknown admin user ${login}` })
      )
    }
    this.pending.delete(requestId)
    return this.approve(request, account)
  }

  private approvingAccount(loginHint: string | undefined): Account | undefined {
    const { appsAndAccounts, approval } = this.deps
    if (loginHint) return appsAndAccounts.findAccount(loginHint)
    if (approval.accountId) return appsAndAccounts.accounts.get(approval.accountId)
    return appsAndAccounts.accounts.values().next().value
  }

  private approve(request: PendingAuthorization, account: Account): Reply {
    const code = this.deps.grants.issueCode(request.app, account, request.redirectUri, request.codeChallenge)
    return redirectReply(withParams(request.redirectUri, { code, state: request.state }))
  }

  private prune(): void {
    const now = this.deps.clock.nowMs()
    for (const [id, p] of this.pending) if (p.expiresAtMs <= now) this.pending.delete(id)
  }

  token(headers: IncomingHttpHeaders, rawBody: string): Reply {
    const { grants, stats } = this.deps
    const failed = (f: OAuthFailure): Reply => {
      stats.tokenRequests.failed++
      return jsonReply(f.status, { error: f.error, error_description: f.description }, {
        pragma: "no-cache",
        ...(f.status === 401 ? { "www-authenticate": 'Basic realm="oauth"' } : {})
      })
    }
    const contentType = String(headers["content-type"] ?? "")
    if (!contentType.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      stats.tokenRequests.failed++
      return jsonReply(400, { error: "invalid_request", error_description: "content type must be application/x-www-form-urlencoded" })
    }
    const form = new URLSearchParams(rawBody)
    const basic = basicCredentials(headers.authorization)
    const grantType = form.get("grant_type")
    if (!grantType) {
      stats.tokenRequests.failed++
      return jsonReply(400, { error: "invalid_request", error_description: "grant_type is required" })
    }
    const client = grants.authenticateClient(form.get("client_id") ?? basic?.id, form.get("client_secret") ?? basic?.secret)
    if (Either.isLeft(client)) return failed(client.left)
    const app = client.right
    const ok = (body: object): Reply => jsonReply(200, body, { pragma: "no-cache" })
    switch (grantType) {
      case "authorization_code": {
        const result = grants.exchangeCode(app, form)
        if (Either.isLeft(result)) return failed(result.left)
        stats.tokenRequests.authorization_code++
        return ok(result.right)
      }
      case "refresh_token": {
        const result = grants.refresh(app, form)
        if (Either.isLeft(result)) return failed(result.left)
        stats.tokenRequests.refresh_token++
        const { accountId, ...body } = result.right
        stats.refreshesByAccount[accountId] = (stats.refreshesByAccount[accountId] ?? 0) + 1
        return ok(body)
      }
      default:
        stats.tokenRequests.failed++
        return jsonReply(400, { error: "unsupported_grant_type", error_description: `grant_type ${grantType} is not supported` })
    }
  }
}

const withParams = (base: string, params: Record<string, string | undefined>): string => {
  const url = new URL(base)
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v)
  return url.toString()
}

const basicCredentials = (header: string | undefined): { id: string; secret: string } | undefined => {
  if (!header || !/^Basic\s+/i.test(header)) return undefined
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, ""), "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return undefined
  return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) }
}

import { Either } from "effect"
import * as crypto from "node:crypto"
import type { Account, App, AppsAndAccounts } from "./AppsAndAccounts.js"
import { OAuthFailure } from "./errors.js"
import { type AccessClaims, signJwt, verifyJwt } from "./Jwt.js"
import type { VirtualClock } from "./VirtualClock.js"

/**
 * The OAuth grants: authorization codes, client authentication, the code exchange (with PKCE), refresh (with
 * rotation), and the access tokens (JWTs) the GraphQL endpoint verifies. The rules that end tokens early are in
 * TokenInvalidation.ts. Synchronous and in memory; time from the virtual clock.
 */

export const CODE_TTL_SECONDS = 600
export const ACCESS_TTL_SECONDS = 3600

interface AuthCode {
  readonly appId: string
  readonly accountId: string
  readonly adminUserId: string
  readonly redirectUri: string
  readonly codeChallenge: string | undefined
  readonly scopes: ReadonlyArray<string>
  readonly expiresAtMs: number
  used: boolean
}

export interface RefreshRecord {
  readonly appId: string
  readonly accountId: string
  readonly adminUserId: string
  readonly secretGeneration: number
  readonly scopes: ReadonlyArray<string>
  /** Why it no longer works; undefined while valid. */
  revoked: string | undefined
}

export interface TokenResponse {
  readonly access_token: string
  readonly refresh_token?: string
  readonly token_type: "Bearer"
  readonly expires_in: number
}

export const randomToken = (bytes: number) => crypto.randomBytes(bytes).toString("base64url")
const sha256b64url = (s: string) => crypto.createHash("sha256").update(s).digest("base64url")

const fail = (status: 400 | 401, error: OAuthFailure["error"], description: string) =>
  Either.left(new OAuthFailure({ status, error, description }))

/** Access tokens whose checked signature is remembered, at most (the oldest forgotten first). */
const verifiedTokensKept = 10_000

export class Grants {
  private readonly codes = new Map<string, AuthCode>()
  private readonly refreshTokens = new Map<string, RefreshRecord>()
  private readonly jwtKey = crypto.randomBytes(32)
  /**
   * Tokens whose signature was checked, with their claims (the key never changes, so neither does the answer): a
   * client sends the same access token with every query, and an HMAC per query was a twentieth of the emulator's CPU
   * serving a backfill. Expiry, the app, the account and the token's generation are checked on every use.
   */
  private readonly verified = new Map<string, AccessClaims>()

  constructor(
    private readonly appsAndAccounts: AppsAndAccounts,
    private readonly clock: VirtualClock
  ) {}

  issueCode(app: App, account: Account, redirectUri: string, codeChallenge: string | undefined): string {
    const code = randomToken(24)
    this.codes.set(code, {
      appId: app.appId,
      accountId: account.accountId,
      adminUserId: account.adminUserId,
      redirectUri,
      codeChallenge,
      scopes: [...app.scopes],
      expiresAtMs: this.clock.nowMs() + CODE_TTL_SECONDS * 1000,
      used: false
    })
    return code
  }

  /** A new access token of the connection's current generation. */
  issueAccess(app: App, accountId: string, adminUserId: string, scopes: ReadonlyArray<string>): string {
    const now = this.clock.nowSeconds()
    const claims: AccessClaims = {
      sub: adminUserId,
      account_id: accountId,
      app_id: app.appId,
      scope: scopes.join(" "),
      iat: now,
      exp: now + ACCESS_TTL_SECONDS,
      jti: randomToken(9),
      gen: this.appsAndAccounts.connection(app.appId, accountId).accessGeneration
    }
    return signJwt(claims, this.jwtKey)
  }

  private issueRefresh(app: App, accountId: string, adminUserId: string, scopes: ReadonlyArray<string>): string {
    const token = randomToken(32)
    this.refreshTokens.set(token, { appId: app.appId, accountId, adminUserId, secretGeneration: app.secretGeneration, scopes, revoked: undefined })
    return token
  }

  /** Client authentication at the token endpoint (always required, PKCE does not replace it). */
  authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Either.Either<App, OAuthFailure> {
    if (!clientId || !clientSecret) return fail(400, "invalid_request", "client_id and client_secret are required")
    const app = this.appsAndAccounts.appByClientId(clientId)
    if (!app) return fail(401, "invalid_client", "unknown client_id")
    const given = Buffer.from(clientSecret)
    const expected = Buffer.from(app.clientSecret)
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      return fail(401, "invalid_client", "client authentication failed (wrong or regenerated client secret)")
    }
    return Either.right(app)
  }

  exchangeCode(app: App, form: URLSearchParams): Either.Either<TokenResponse, OAuthFailure> {
    const codeValue = form.get("code")
    const redirectUri = form.get("redirect_uri")
    if (!codeValue) return fail(400, "invalid_request", "code is required")
    if (!redirectUri) return fail(400, "invalid_request", "redirect_uri is required")
    const code = this.codes.get(codeValue)
    if (!code || code.appId !== app.appId) return fail(400, "invalid_grant", "authorization code is invalid")
    if (code.used) return fail(400, "invalid_grant", "authorization code has already been used")
    if (this.clock.nowMs() >= code.expiresAtMs) return fail(400, "invalid_grant", "authorization code has expired")
    if (code.redirectUri !== redirectUri) return fail(400, "invalid_grant", "redirect_uri does not match the authorization request")
    const verifier = form.get("code_verifier")
    if (code.codeChallenge !== undefined) {
      if (!verifier) return fail(400, "invalid_grant", "code_verifier is required: the authorization request used PKCE")
      if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return fail(400, "invalid_grant", "code_verifier must be 43 to 128 unreserved characters")
      if (sha256b64url(verifier) !== code.codeChallenge) return fail(400, "invalid_grant", "code_verifier does not match the code_challenge")
    } else if (verifier) {
      return fail(400, "invalid_grant", "code_verifier sent but the authorization request had no code_challenge")
    }
    code.used = true
    const connection = this.appsAndAccounts.connection(app.appId, code.accountId)
    connection.status = "connected"
    return Either.right({
      access_token: this.issueAccess(app, code.accountId, code.adminUserId, code.scopes),
      refresh_token: this.issueRefresh(app, code.accountId, code.adminUserId, code.scopes),
      token_type: "Bearer",
      expires_in: ACCESS_TTL_SECONDS
    })
  }

  /** Why a refresh token would be refused now, or undefined when it is valid. */
  private refreshProblem(app: App, token: string): string | undefined {
    const record = this.refreshTokens.get(token)
    if (!record || record.appId !== app.appId) return "refresh token is invalid"
    if (record.revoked) return `refresh token was revoked (${record.revoked})`
    if (record.secretGeneration !== app.secretGeneration) return "refresh token was revoked (client secret regenerated)"
    return undefined
  }

  refresh(app: App, form: URLSearchParams): Either.Either<TokenResponse & { readonly accountId: string }, OAuthFailure> {
    const token = form.get("refresh_token")
    if (!token) return fail(400, "invalid_request", "refresh_token is required")
    const problem = this.refreshProblem(app, token)
    if (problem) return fail(400, "invalid_grant", problem)
    const record = this.refreshTokens.get(token)!
    const access = this.issueAccess(app, record.accountId, record.adminUserId, record.scopes)
    let rotated: string | undefined
    if (app.rotation) {
      record.revoked = "rotated: replaced by a newer refresh token"
      rotated = this.issueRefresh(app, record.accountId, record.adminUserId, record.scopes)
    }
    return Either.right({
      access_token: access,
      ...(rotated ? { refresh_token: rotated } : {}),
      token_type: "Bearer",
      expires_in: ACCESS_TTL_SECONDS,
      accountId: record.accountId
    })
  }

  /** Marks every still valid refresh token that `match` selects as revoked for `reason`; how many it revoked. */
  revokeRefreshTokens(reason: string, match: (r: Readonly<RefreshRecord>) => boolean): number {
    let n = 0
    for (const r of this.refreshTokens.values()) {
      if (!r.revoked && match(r)) {
        r.revoked = reason
        n++
      }
    }
    return n
  }

  isRefreshTokenValid(clientId: string, token: string): boolean {
    const app = this.appsAndAccounts.requireApp("isRefreshTokenValid", clientId)
    return this.refreshProblem(app, token) === undefined
  }

  liveRefreshTokens(clientId: string, accountId: string): number {
    const app = this.appsAndAccounts.requireApp("liveRefreshTokens", clientId)
    let live = 0
    for (const [token, record] of this.refreshTokens) {
      if (record.accountId === accountId && this.refreshProblem(app, token) === undefined) live++
    }
    return live
  }

  /** The claims of an access token the GraphQL endpoint accepts now, or undefined ("Invalid Token Error"). */
  private signedClaims(token: string): AccessClaims | undefined {
    const known = this.verified.get(token)
    if (known !== undefined) return known
    const claims = verifyJwt(token, this.jwtKey)
    if (claims === undefined) return undefined
    if (this.verified.size >= verifiedTokensKept) this.verified.delete(this.verified.keys().next().value!)
    this.verified.set(token, claims)
    return claims
  }

  verifyAccess(token: string): { claims: AccessClaims; app: App; account: Account } | undefined {
    const claims = this.signedClaims(token)
    if (!claims || claims.exp <= this.clock.nowSeconds()) return undefined
    const app = this.appsAndAccounts.apps.get(claims.app_id)
    const account = this.appsAndAccounts.accounts.get(claims.account_id)
    if (!app || !account) return undefined
    if (claims.gen !== this.appsAndAccounts.connection(app.appId, account.accountId).accessGeneration) return undefined
    return { claims, app, account }
  }
}

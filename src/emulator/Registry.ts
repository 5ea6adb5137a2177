import { Either } from "effect"
import * as crypto from "node:crypto"
import type { AccountSpec, AppSpec } from "./EmulatorAdmin.js"
import { AdminRejected, OAuthFailure } from "./errors.js"
import { encodeId } from "./Ids.js"
import type { CursorMode } from "./data/Collection.js"
import type { RecordDefinition } from "./data/RecordType.js"
import { checkServed, World } from "./data/World.js"
import { type AccessClaims, signJwt, verifyJwt } from "./Jwt.js"
import type { VirtualClock } from "./VirtualClock.js"
import { webhookTopics } from "./webhookTopics.js"

/**
 * The service's side of OAuth: apps, accounts, authorization codes, tokens and every rule that invalidates
 * them (the spec's "Token and connection validity" table). Synchronous and in memory; time from the virtual clock.
 */

export const CODE_TTL_SECONDS = 600
export const ACCESS_TTL_SECONDS = 3600
export const DEFAULT_SCOPES: ReadonlyArray<string> = [
  "read_jobs", "read_clients", "read_invoices", "read_quotes", "read_visits", "read_requests", "read_users", "read_products"
]

export interface App {
  readonly appId: string
  readonly clientId: string
  clientSecret: string
  /** Bumped by regenerateSecret; refresh tokens remember the generation they were issued under. */
  secretGeneration: number
  redirectUri: string
  webhookUrl: string | undefined
  /** Change topics sent to `webhookUrl` for every connected account without a subscription (tests, benchmarks). */
  webhookTopics: ReadonlyArray<string>
  scopes: ReadonlyArray<string>
  rotation: boolean
  name: string
  author: string
}

export interface Account {
  readonly accountId: string
  readonly name: string
  readonly adminUserId: string
  readonly adminEmail: string
  readonly adminName: string
  /** The account's records, every collection. */
  readonly world: World
  readonly seed: number
  /** The cursors its connections issue (default: the registry's). */
  cursorMode: CursorMode | undefined
}

export interface Connection {
  status: "connected" | "disconnected"
  /** Access tokens carry the generation they were issued under; a disconnect bumps it so all of them die at once. */
  accessGeneration: number
}

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

interface RefreshRecord {
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

const accountNames = [
  "Maple Leaf Landscaping", "Café Lumière Services", "Northside Snow & Lawn", "Crystal Clear Windows",
  "Bélanger Home Care", "Green Thumb Gardens", "Aurora Pressure Washing", "Østergaard Property Maintenance"
]

const random = (bytes: number) => crypto.randomBytes(bytes).toString("base64url")
const sha256b64url = (s: string) => crypto.createHash("sha256").update(s).digest("base64url")

const fail = (status: 400 | 401, error: OAuthFailure["error"], description: string) =>
  Either.left(new OAuthFailure({ status, error, description }))

export class Registry {
  readonly apps = new Map<string, App>()
  private readonly appsByClientId = new Map<string, App>()
  readonly accounts = new Map<string, Account>()
  private readonly connections = new Map<string, Connection>()
  private readonly codes = new Map<string, AuthCode>()
  private readonly refreshTokens = new Map<string, RefreshRecord>()
  private readonly jwtKey = crypto.randomBytes(32)
  private appCounter = 0
  private accountCounter = 0
  /** The cursors connections issue unless an account says otherwise. */
  cursorMode: CursorMode = "offset"

  constructor(
    readonly clock: VirtualClock,
    readonly baseUrl: () => string,
    /** Collection definitions every account's world takes over the defaults (by name): data sets of a test. */
    readonly definitions: ReadonlyArray<RecordDefinition> = []
  ) {
    for (const def of definitions) checkServed(def)
  }

  // ---- apps and accounts ------------------------------------------------------------------------------

  createApp(spec: AppSpec): App {
    if (!spec.clientId || !spec.clientSecret) throw new AdminRejected({ reason: "createApp: clientId and clientSecret are required" })
    if (this.appsByClientId.has(spec.clientId)) throw new AdminRejected({ reason: `createApp: client id ${spec.clientId} already exists` })
    assertUrl("createApp: redirectUri", spec.redirectUri)
    if (spec.webhookUrl !== undefined) assertUrl("createApp: webhookUrl", spec.webhookUrl)
    if (spec.webhookTopics !== undefined) assertTopics("createApp: webhookTopics", spec.webhookTopics)
    const n = ++this.appCounter
    const app: App = {
      appId: encodeId("Application", n),
      clientId: spec.clientId,
      clientSecret: spec.clientSecret,
      secretGeneration: 1,
      redirectUri: spec.redirectUri,
      webhookUrl: spec.webhookUrl,
      webhookTopics: [...(spec.webhookTopics ?? [])],
      scopes: [...(spec.scopes ?? DEFAULT_SCOPES)],
      rotation: spec.rotation ?? false,
      name: spec.name ?? `Test App ${n}`,
      author: spec.author ?? "Account Sync Developers"
    }
    this.apps.set(app.appId, app)
    this.appsByClientId.set(app.clientId, app)
    return app
  }

  /** Draft-style edits of an app's settings (no tokens are touched). */
  updateApp(
    clientId: string,
    patch: { redirectUri?: string; webhookUrl?: string | null; rotation?: boolean; scopes?: ReadonlyArray<string>; webhookTopics?: ReadonlyArray<string> }
  ): App {
    const app = this.requireApp("updateApp", clientId)
    if (patch.redirectUri !== undefined) {
      assertUrl("updateApp: redirectUri", patch.redirectUri)
      app.redirectUri = patch.redirectUri
    }
    if (patch.webhookUrl !== undefined) {
      if (patch.webhookUrl !== null) assertUrl("updateApp: webhookUrl", patch.webhookUrl)
      app.webhookUrl = patch.webhookUrl ?? undefined
    }
    if (patch.rotation !== undefined) app.rotation = patch.rotation
    if (patch.scopes !== undefined) app.scopes = [...patch.scopes]
    if (patch.webhookTopics !== undefined) {
      assertTopics("updateApp: webhookTopics", patch.webhookTopics)
      app.webhookTopics = [...patch.webhookTopics]
    }
    return app
  }

  createAccount(spec: AccountSpec): Account {
    const n = ++this.accountCounter
    const accountId = spec.accountId ?? encodeId("Account", 1000 + n)
    if (this.accounts.has(accountId)) throw new AdminRejected({ reason: `createAccount: account ${accountId} already exists` })
    const name = spec.name ?? accountNames[(n - 1) % accountNames.length]! + (n > accountNames.length ? ` ${n}` : "")
    const seed = spec.seed ?? n * 7919
    const slug = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase() || `account-${n}`
    const now = this.clock.nowMs()
    const account: Account = {
      accountId,
      name,
      adminUserId: encodeId("User", 5000 + n),
      adminEmail: `admin@${slug}.example`,
      adminName: `Admin of ${name}`,
      seed,
      cursorMode: spec.cursorMode,
      world: new World({
        seed,
        idBase: n * 100_000_000,
        webBase: this.baseUrl(),
        nowMs: now,
        jobs: spec.jobs ?? 0,
        ...(spec.sizes ? { sizes: spec.sizes } : {}),
        ...(this.definitions.length > 0 ? { definitions: this.definitions } : {}),
        cursorMode: () => account.cursorMode ?? this.cursorMode
      })
    }
    this.accounts.set(accountId, account)
    return account
  }

  appByClientId(clientId: string): App | undefined {
    return this.appsByClientId.get(clientId)
  }

  requireApp(operation: string, clientId: string): App {
    const app = this.appsByClientId.get(clientId)
    if (!app) throw new AdminRejected({ reason: `${operation}: no app with client id ${clientId}` })
    return app
  }

  requireAccount(operation: string, accountId: string): Account {
    const account = this.accounts.get(accountId)
    if (!account) throw new AdminRejected({ reason: `${operation}: no account ${accountId}` })
    return account
  }

  /** The account an approval is for: by account id, admin user id or admin email. */
  findAccount(hint: string): Account | undefined {
    for (const a of this.accounts.values()) {
      if (a.accountId === hint || a.adminUserId === hint || a.adminEmail.toLowerCase() === hint.toLowerCase()) return a
    }
    return undefined
  }

  connection(appId: string, accountId: string): Connection {
    const key = `${appId}|${accountId}`
    let c = this.connections.get(key)
    if (!c) {
      c = { status: "disconnected", accessGeneration: 1 }
      this.connections.set(key, c)
    }
    return c
  }

  // ---- authorization codes and tokens ----------------------------------------------------------------

  issueCode(app: App, account: Account, redirectUri: string, codeChallenge: string | undefined): string {
    const code = random(24)
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

  private issueAccess(app: App, accountId: string, adminUserId: string, scopes: ReadonlyArray<string>): string {
    const now = this.clock.nowSeconds()
    const claims: AccessClaims = {
      sub: adminUserId,
      account_id: accountId,
      app_id: app.appId,
      scope: scopes.join(" "),
      iat: now,
      exp: now + ACCESS_TTL_SECONDS,
      jti: random(9),
      gen: this.connection(app.appId, accountId).accessGeneration
    }
    return signJwt(claims, this.jwtKey)
  }

  private issueRefresh(app: App, accountId: string, adminUserId: string, scopes: ReadonlyArray<string>): string {
    const token = random(32)
    this.refreshTokens.set(token, { appId: app.appId, accountId, adminUserId, secretGeneration: app.secretGeneration, scopes, revoked: undefined })
    return token
  }

  /** Client authentication at the token endpoint (always required, PKCE does not replace it). */
  authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Either.Either<App, OAuthFailure> {
    if (!clientId || !clientSecret) return fail(400, "invalid_request", "client_id and client_secret are required")
    const app = this.appsByClientId.get(clientId)
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
    const connection = this.connection(app.appId, code.accountId)
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

  isRefreshTokenValid(clientId: string, token: string): boolean {
    const app = this.requireApp("isRefreshTokenValid", clientId)
    return this.refreshProblem(app, token) === undefined
  }

  liveRefreshTokens(clientId: string, accountId: string): number {
    const app = this.requireApp("liveRefreshTokens", clientId)
    let live = 0
    for (const [token, record] of this.refreshTokens) {
      if (record.accountId === accountId && this.refreshProblem(app, token) === undefined) live++
    }
    return live
  }

  /** The claims of an access token the GraphQL endpoint accepts now, or undefined ("Invalid Token Error"). */
  verifyAccess(token: string): { claims: AccessClaims; app: App; account: Account } | undefined {
    const claims = verifyJwt(token, this.jwtKey)
    if (!claims || claims.exp <= this.clock.nowSeconds()) return undefined
    const app = this.apps.get(claims.app_id)
    const account = this.accounts.get(claims.account_id)
    if (!app || !account) return undefined
    if (claims.gen !== this.connection(app.appId, account.accountId).accessGeneration) return undefined
    return { claims, app, account }
  }

  // ---- invalidation rules ------------------------------------------------------------------------------

  private revokeRefresh(reason: string, match: (r: RefreshRecord) => boolean): number {
    let n = 0
    for (const r of this.refreshTokens.values()) {
      if (!r.revoked && match(r)) {
        r.revoked = reason
        n++
      }
    }
    return n
  }

  /** Kills every access and refresh token of (app, account) and marks the connection disconnected. */
  disconnectAll(app: App, account: Account, reason: string): void {
    const connection = this.connection(app.appId, account.accountId)
    connection.accessGeneration++
    connection.status = "disconnected"
    this.revokeRefresh(reason, (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  /** Churn, downgrade or admin deactivation: refresh tokens die; access tokens live until they expire. */
  automaticDisconnect(app: App, account: Account, reason: string): void {
    this.connection(app.appId, account.accountId).status = "disconnected"
    this.revokeRefresh(`automatic disconnect: ${reason}`, (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  regenerateSecret(app: App): string {
    const previous = app.secretGeneration
    app.clientSecret = `secret_${random(24)}`
    app.secretGeneration++
    this.revokeRefresh("client secret regenerated", (r) => r.appId === app.appId && r.secretGeneration === previous)
    return app.clientSecret
  }

  reauthorizeAfterScopeChange(app: App, account: Account, scopes: ReadonlyArray<string>): void {
    app.scopes = [...scopes]
    this.revokeRefresh("re-authorized after a scope change", (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  startSandboxSession(app: App, account: Account): string {
    this.revokeRefresh("a sandbox test session was started", (r) => r.appId === app.appId && r.adminUserId === account.adminUserId)
    return this.issueAccess(app, account.accountId, account.adminUserId, app.scopes)
  }
}

const assertTopics = (what: string, topics: ReadonlyArray<string>) => {
  const unknown = topics.filter((t) => !webhookTopics().has(t))
  if (unknown.length > 0) throw new AdminRejected({ reason: `${what}: ${unknown.join(", ")} ${unknown.length === 1 ? "is not a" : "are not"} WebHookTopicEnum value${unknown.length === 1 ? "" : "s"}` })
}

export const assertUrl = (what: string, value: string) => {
  try {
    const u = new URL(value)
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error()
  } catch {
    throw new AdminRejected({ reason: `${what}: expected an absolute http(s) URL, got ${JSON.stringify(value)}` })
  }
}

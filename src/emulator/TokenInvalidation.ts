import type { Account, App, AppsAndAccounts } from "./AppsAndAccounts.js"
import { type Grants, randomToken } from "./Grants.js"

/**
 * The spec's "Token and connection validity" table: what each disconnect, secret regeneration, scope change and
 * sandbox session does to an app's connection and tokens (see the invalidation table in src/emulator/README.md).
 */
export class TokenInvalidation {
  constructor(
    private readonly appsAndAccounts: AppsAndAccounts,
    private readonly grants: Grants
  ) {}

  /** Kills every access and refresh token of (app, account) and marks the connection disconnected. */
  disconnectAll(app: App, account: Account, reason: string): void {
    const connection = this.appsAndAccounts.connection(app.appId, account.accountId)
    connection.accessGeneration++
    connection.status = "disconnected"
    this.grants.revokeRefreshTokens(reason, (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  /** Churn, downgrade or admin deactivation: refresh tokens die; access tokens live until they expire. */
  automaticDisconnect(app: App, account: Account, reason: string): void {
    this.appsAndAccounts.connection(app.appId, account.accountId).status = "disconnected"
    this.grants.revokeRefreshTokens(`automatic disconnect: ${reason}`, (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  regenerateSecret(app: App): string {
    const previous = app.secretGeneration
    app.clientSecret = `secret_${randomToken(24)}`
    app.secretGeneration++
    this.grants.revokeRefreshTokens("client secret regenerated", (r) => r.appId === app.appId && r.secretGeneration === previous)
    return app.clientSecret
  }

  reauthorizeAfterScopeChange(app: App, account: Account, scopes: ReadonlyArray<string>): void {
    app.scopes = [...scopes]
    this.grants.revokeRefreshTokens("re-authorized after a scope change", (r) => r.appId === app.appId && r.accountId === account.accountId)
  }

  startSandboxSession(app: App, account: Account): string {
    this.grants.revokeRefreshTokens("a sandbox test session was started", (r) => r.appId === app.appId && r.adminUserId === account.adminUserId)
    return this.grants.issueAccess(app, account.accountId, account.adminUserId, app.scopes)
  }
}

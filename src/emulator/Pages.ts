import type { Account, App } from "./AppsAndAccounts.js"
import { escapeHtml as e } from "./Http.js"

/** The few HTML pages a user sees: login + consent, denial, errors, and the app's marketplace listing. */

const layout = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d2b36}
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}li{margin:.2rem 0}.error{color:#a00}</style>
</head><body>${body}</body></html>`

export const consentPage = (options: {
  readonly requestId: string
  readonly app: App
  readonly accounts: ReadonlyArray<Account>
  readonly selected?: string
  readonly error?: string
}) =>
  layout(
    `Authorize ${options.app.name}`,
    `<h1>${e(options.app.name)} wants to connect to your account</h1>
<p>by ${e(options.app.author)}</p>
${options.error ? `<p class="error">${e(options.error)}</p>` : ""}
<form method="post" action="/api/oauth/authorize">
<input type="hidden" name="request_id" value="${e(options.requestId)}">
<h2>Log in</h2>
<label>Admin user <select name="login">
${options.accounts
  .map((a) => `<option value="${e(a.accountId)}"${a.accountId === options.selected ? " selected" : ""}>${e(a.adminEmail)} (${e(a.name)})</option>`)
  .join("\n")}
</select></label>
<h2>This app will be able to</h2>
<ul>${options.app.scopes.map((s) => `<li data-scope="${e(s)}">${e(s)}</li>`).join("")}</ul>
<button type="submit" name="decision" value="allow">Allow Access</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`
  )

export const deniedPage = (app: App) =>
  layout("Access denied", `<h1>You denied ${e(app.name)} access</h1><p>Nothing was shared. You can close this window.</p>`)

export const errorPage = (message: string) => layout("Authorization error", `<h1>Authorization error</h1><p class="error">${e(message)}</p>`)

export const marketplacePage = (app: App) =>
  layout(`${app.name} – App Marketplace`, `<h1>${e(app.name)}</h1><p>by ${e(app.author)}</p><p>Connect this app from your account's App Marketplace.</p>`)

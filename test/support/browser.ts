import { Data, Duration, Effect } from "effect"

/**
 * A scripted browser for the authorization endpoint: GETs the authorization URL and, when a login + consent page
 * comes back, submits it like a user would (Allow Access or Deny). It does NOT follow the final redirect to the app:
 * the caller gets `location` and decides. Each request times out after 10 s.
 */

export interface BrowserResult {
  /** HTTP status of the last answer (302 when redirected, 200/400 for a page). */
  readonly status: number
  /** The Location of a redirect, or null when the answer was a page (no redirect). */
  readonly location: string | null
  /** Body of the last answer (the page's HTML when there was no redirect). */
  readonly body: string
}

export class BrowserError extends Data.TaggedError("BrowserError")<{ readonly url: string; readonly reason: string }> {
  override get message() {
    return `browser at ${this.url}: ${this.reason}`
  }
}

const request = (url: string, init: RequestInit) =>
  Effect.tryPromise({
    try: async (signal) => {
      const res = await fetch(url, { ...init, redirect: "manual", signal })
      return { status: res.status, location: res.headers.get("location"), body: await res.text() } satisfies BrowserResult
    },
    catch: (e) => new BrowserError({ url, reason: e instanceof Error ? e.message : String(e) })
  }).pipe(Effect.timeoutFail({ duration: Duration.seconds(10), onTimeout: () => new BrowserError({ url, reason: "no answer within 10 s" }) }))

const attr = (tag: string, name: string): string | undefined => {
  const m = new RegExp(`${name}="([^"]*)"`).exec(tag)
  return m ? m[1]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&") : undefined
}

/** Effect: approve (or deny) the authorization request at `authorizeUrl` as the admin of `accountId` (default: preselected/first). */
export const approveInBrowser = (
  authorizeUrl: string,
  options: { readonly accountId?: string; readonly deny?: boolean } = {}
): Effect.Effect<BrowserResult, BrowserError> =>
  Effect.gen(function* () {
    const page = yield* request(authorizeUrl, { method: "GET" })
    if (page.status !== 200 || !page.body.includes("<form")) return page
    const form = /<form[^>]*>/.exec(page.body)?.[0] ?? ""
    const action = new URL(attr(form, "action") ?? "", authorizeUrl).toString()
    const fields = new URLSearchParams()
    for (const input of page.body.match(/<input[^>]*type="hidden"[^>]*>/g) ?? []) {
      const name = attr(input, "name")
      if (name) fields.set(name, attr(input, "value") ?? "")
    }
    const options_ = [...page.body.matchAll(/<option value="([^"]*)"([^>]*)>/g)]
    const chosen = options.accountId ?? options_.find((o) => o[2]!.includes("selected"))?.[1] ?? options_[0]?.[1]
    if (!options.deny) {
      if (!chosen) return yield* Effect.fail(new BrowserError({ url: authorizeUrl, reason: "the login page lists no admin user to log in as" }))
      fields.set("login", chosen)
    }
    fields.set("decision", options.deny ? "deny" : "allow")
    return yield* request(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: fields.toString() })
  })

/** The same as a Promise, for code outside Effect. */
export const approveInBrowserPromise = (authorizeUrl: string, options: { readonly accountId?: string; readonly deny?: boolean } = {}) =>
  Effect.runPromise(approveInBrowser(authorizeUrl, options))

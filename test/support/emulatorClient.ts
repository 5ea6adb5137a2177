import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http_ from "node:http"
import type { TestEmulatorShape } from "./emulator.js"

/** Plain HTTP helpers for the conformance tests: they drive the emulator the way a client would. */

export interface HttpAnswer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export const http = (url: string, init: RequestInit = {}): Effect.Effect<HttpAnswer> =>
  Effect.promise(async (signal) => {
    const res = await fetch(url, { redirect: "manual", ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]) })
    const text = await res.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      // not JSON (a page or a truncated body)
    }
    return { status: res.status, headers: res.headers, text, json }
  })

export const pkce = () => {
  const verifier = crypto.randomBytes(32).toString("base64url")
  return { verifier, challenge: crypto.createHash("sha256").update(verifier).digest("base64url") }
}

export const authorizeUrl = (emu: TestEmulatorShape, params: Record<string, string | undefined> = {}): string => {
  const url = new URL(`${emu.baseUrl}/api/oauth/authorize`)
  const all: Record<string, string | undefined> = { response_type: "code", client_id: emu.app.clientId, redirect_uri: emu.app.redirectUri, ...params }
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v)
  return url.toString()
}

export const postForm = (url: string, fields: Record<string, string | undefined>): Effect.Effect<HttpAnswer> => {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.set(k, v)
  return http(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() })
}

export const exchange = (emu: TestEmulatorShape, code: string, extra: Record<string, string | undefined> = {}) =>
  postForm(`${emu.baseUrl}/api/oauth/token`, {
    grant_type: "authorization_code",
    client_id: emu.app.clientId,
    client_secret: emu.app.clientSecret,
    code,
    redirect_uri: emu.app.redirectUri,
    ...extra
  })

export const refresh = (emu: TestEmulatorShape, refreshToken: string, extra: Record<string, string | undefined> = {}) =>
  postForm(`${emu.baseUrl}/api/oauth/token`, {
    grant_type: "refresh_token",
    client_id: emu.app.clientId,
    client_secret: emu.app.clientSecret,
    refresh_token: refreshToken,
    ...extra
  })

/** A code from the auto-approving authorization endpoint (PKCE unless `pkce: false`). */
export const authorize = (emu: TestEmulatorShape, options: { accountId?: string; state?: string; pkce?: boolean } = {}) =>
  Effect.gen(function* () {
    const pair = options.pkce === false ? undefined : pkce()
    const res = yield* http(
      authorizeUrl(emu, {
        state: options.state ?? crypto.randomBytes(8).toString("hex"),
        ...(pair ? { code_challenge: pair.challenge, code_challenge_method: "S256" } : {}),
        ...(options.accountId ? { login_hint: options.accountId } : {})
      })
    )
    if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${res.text.slice(0, 300)}`)
    const location = new URL(res.headers.get("location")!)
    return { code: location.searchParams.get("code")!, verifier: pair?.verifier, location }
  })

export interface Tokens {
  readonly access_token: string
  readonly refresh_token: string
  readonly token_type: string
  readonly expires_in: number
}

/** The whole flow (authorize + code exchange) for an account: its tokens. */
export const connect = (emu: TestEmulatorShape, accountId?: string) =>
  Effect.gen(function* () {
    const { code, verifier } = yield* authorize(emu, accountId ? { accountId } : {})
    const res = yield* exchange(emu, code, { code_verifier: verifier })
    if (res.status !== 200) throw new Error(`code exchange answered ${res.status}: ${res.text}`)
    return res.json as Tokens
  })

export const graphql = (
  emu: TestEmulatorShape,
  token: string | undefined,
  query: string,
  options: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {}
) =>
  http(`${emu.baseUrl}/api/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "X-SERVICE-GRAPHQL-VERSION": "2025-01-20",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...options.headers
    },
    body: JSON.stringify({ query, ...(options.variables ? { variables: options.variables } : {}) })
  })

export const ACCOUNT_QUERY = "{ account { id name } }"
export const JOBS_QUERY = `query Jobs($first: Int!, $after: String) {
  jobs(first: $first, after: $after) { nodes { id jobNumber title } pageInfo { hasNextPage endCursor } }
}`

export const jwtPayload = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"))

/** A local webhook receiver (closed with the test's scope): its URL. */
export const listen = (onBody: (body: string, headers: http_.IncomingHttpHeaders) => number | void) =>
  Effect.acquireRelease(
    Effect.async<http_.Server>((resume) => {
      const server = http_.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const status = onBody(Buffer.concat(chunks).toString("utf8"), req.headers) ?? 200
          res.writeHead(status).end()
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks`))

/** Polls `check` every 20 ms for up to 10 s (webhooks are delivered in the background). */
export const waitFor = (check: () => boolean, timeoutMs = 10_000) =>
  Effect.gen(function* () {
    const start = Date.now()
    while (!check()) {
      if (Date.now() - start > timeoutMs) return yield* Effect.die(new Error(`condition not met within ${timeoutMs} ms`))
      yield* Effect.sleep("20 millis")
    }
  })

/** Polls an effectful `check` every 20 ms for up to 10 s. */
export const waitUntil = <E>(check: Effect.Effect<boolean, E>, timeoutMs = 10_000) =>
  Effect.gen(function* () {
    const start = Date.now()
    while (!(yield* check)) {
      if (Date.now() - start > timeoutMs) return yield* Effect.die(new Error(`condition not met within ${timeoutMs} ms`))
      yield* Effect.sleep("20 millis")
    }
  })

/** A page of jobs with `args`: its nodes' `fields` and the whole pageInfo. */
export const pageQuery = (args: string, fields = "id jobNumber") =>
  `{ jobs(${args}) { nodes { ${fields} } pageInfo { hasNextPage endCursor hasPreviousPage startCursor } } }`

import { Redacted } from "effect"
import * as crypto from "node:crypto"

/** Flows started here, and the code lifetime at the service: a callback after this cannot succeed anyway. */
export const pendingFlowLifetimeMs = 10 * 60 * 1000

const base64url = (bytes: Buffer) => bytes.toString("base64url")

/** An unguessable `state`: 32 random bytes, base64url. */
export const newState = (): string => base64url(crypto.randomBytes(32))

/** A PKCE verifier: 64 random bytes as base64url = 86 characters, all from the unreserved set. */
export const newCodeVerifier = (): Redacted.Redacted<string> => Redacted.make(base64url(crypto.randomBytes(64)))

/** S256: base64url(SHA-256(verifier)) without padding. */
export const codeChallenge = (verifier: Redacted.Redacted<string>): string =>
  base64url(crypto.createHash("sha256").update(Redacted.value(verifier), "ascii").digest())

export interface AuthorizationRequest {
  readonly baseUrl: string
  readonly clientId: string
  readonly redirectUri: string
  readonly state?: string
  readonly codeVerifier?: Redacted.Redacted<string>
}

/** `{base}/api/oauth/authorize?response_type=code&client_id&redirect_uri[&state][&code_challenge&code_challenge_method=S256]` */
export const authorizationUrl = (request: AuthorizationRequest): string => {
  const url = new URL(`${request.baseUrl}/api/oauth/authorize`)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("client_id", request.clientId)
  url.searchParams.set("redirect_uri", request.redirectUri)
  if (request.state !== undefined) url.searchParams.set("state", request.state)
  if (request.codeVerifier !== undefined) {
    url.searchParams.set("code_challenge", codeChallenge(request.codeVerifier))
    url.searchParams.set("code_challenge_method", "S256")
  }
  return url.toString()
}

/** Constant-time string equality (lengths may differ). */
export const safeEqual = (a: string, b: string): boolean => {
  const ha = crypto.createHash("sha256").update(a).digest()
  const hb = crypto.createHash("sha256").update(b).digest()
  return crypto.timingSafeEqual(ha, hb) && a.length === b.length
}

import * as crypto from "node:crypto"

/** HS256 JWTs: the access tokens the emulator issues (the spec: three dot-separated base64 parts, `exp` in the payload). */

export interface AccessClaims {
  /** Admin user id. */
  readonly sub: string
  readonly account_id: string
  readonly app_id: string
  readonly scope: string
  readonly iat: number
  readonly exp: number
  readonly jti: string
  /** Connection generation at issue: a disconnect bumps it, which kills every earlier access token at once. */
  readonly gen: number
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString("base64url")
const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))

export const signJwt = (claims: AccessClaims, key: Buffer): string => {
  const body = `${header}.${b64url(JSON.stringify(claims))}`
  return `${body}.${crypto.createHmac("sha256", key).update(body).digest("base64url")}`
}

/** The claims of a well-formed token signed with `key`, or undefined (expiry is the caller's rule). */
export const verifyJwt = (token: string, key: Buffer): AccessClaims | undefined => {
  const parts = token.split(".")
  if (parts.length !== 3 || parts[0] !== header) return undefined
  const expected = crypto.createHmac("sha256", key).update(`${parts[0]}.${parts[1]}`).digest()
  const given = Buffer.from(parts[2]!, "base64url")
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as AccessClaims
    return typeof claims.exp === "number" && typeof claims.account_id === "string" && typeof claims.app_id === "string" ? claims : undefined
  } catch {
    return undefined
  }
}

import { describe, expect, it } from "@effect/vitest"
import { Option, Redacted } from "effect"
import { jwtIssuedAt } from "../../../src/auth/Jwt.js"

const jwt = (payload: Record<string, unknown>) =>
  Redacted.make(["{\"alg\":\"HS256\"}", JSON.stringify(payload), "signature"].map((p, i) => (i < 2 ? Buffer.from(p).toString("base64url") : p)).join("."))

describe("when the service issued an access token (its clock)", () => {
  const cases: ReadonlyArray<readonly [string, Redacted.Redacted<string>, number | undefined, string | undefined]> = [
    ["its iat", jwt({ iat: 1_790_000_000, exp: 1_790_003_600 }), 7200, "2026-09-21T14:13:20.000Z"],
    ["exp less expires_in, without iat", jwt({ exp: 1_790_003_600 }), 3600, "2026-09-21T14:13:20.000Z"],
    ["nothing without iat nor expires_in", jwt({ exp: 1_790_003_600 }), undefined, undefined],
    ["nothing for a token that is not a JWT", Redacted.make("opaque-token"), 3600, undefined],
    ["nothing for a payload that is not JSON", Redacted.make("a.b.c"), 3600, undefined]
  ]
  for (const [name, token, expiresIn, expected] of cases) {
    it(name, () => expect(Option.getOrUndefined(jwtIssuedAt(token, expiresIn))?.toISOString()).toBe(expected))
  }
})

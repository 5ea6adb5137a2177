import { Either, Option, Redacted, Schema } from "effect"

const Payload = Schema.parseJson(Schema.Struct({ exp: Schema.Number }))
const decodePayload = Schema.decodeUnknownEither(Payload)

/** The `exp` of a JWT access token (seconds since the epoch), when it has one; the signature is not checked. */
export const jwtExpiry = (token: Redacted.Redacted<string>): Option.Option<Date> => {
  const parts = Redacted.value(token).split(".")
  if (parts.length !== 3) return Option.none()
  const json = Buffer.from(parts[1]!, "base64url").toString("utf8")
  return Either.match(decodePayload(json), {
    onLeft: () => Option.none(),
    onRight: ({ exp }) => Option.some(new Date(exp * 1000))
  })
}

const ScopeClaim = Schema.parseJson(Schema.Struct({ scope: Schema.String }))
const decodeScope = Schema.decodeUnknownEither(ScopeClaim)

/** A space-separated `scope` claim in the JWT payload, when the service puts one there. */
export const jwtScopes = (token: Redacted.Redacted<string>): Option.Option<ReadonlyArray<string>> => {
  const parts = Redacted.value(token).split(".")
  if (parts.length !== 3) return Option.none()
  return Either.match(decodeScope(Buffer.from(parts[1]!, "base64url").toString("utf8")), {
    onLeft: () => Option.none(),
    onRight: ({ scope }) => Option.some(scope.split(/[\s,]+/).filter((s) => s.length > 0))
  })
}

const Times = Schema.parseJson(Schema.Struct({ iat: Schema.optional(Schema.Number), exp: Schema.optional(Schema.Number) }))
const decodeTimes = Schema.decodeUnknownEither(Times)

/**
 * When the service issued a JWT access token, on the service's clock: its `iat`, else its `exp` less the lifetime the
 * token response gave (`expires_in`), when it says either.
 */
export const jwtIssuedAt = (token: Redacted.Redacted<string>, expiresIn: number | undefined): Option.Option<Date> => {
  const parts = Redacted.value(token).split(".")
  if (parts.length !== 3) return Option.none()
  return Either.match(decodeTimes(Buffer.from(parts[1]!, "base64url").toString("utf8")), {
    onLeft: () => Option.none(),
    onRight: ({ iat, exp }) =>
      iat !== undefined ? Option.some(new Date(iat * 1000)) : exp !== undefined && expiresIn !== undefined ? Option.some(new Date((exp - expiresIn) * 1000)) : Option.none()
  })
}

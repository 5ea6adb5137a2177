import { Data, Either, Redacted } from "effect"
import * as crypto from "node:crypto"

export const signatureHeader = "x-service-hmac-sha256"

/** Bad or missing `X-Service-Hmac-SHA256`: answered 401, nothing changes. */
export class WebhookSignatureInvalid extends Data.TaggedError("WebhookSignatureInvalid")<{ readonly reason: string }> {
  override get message() {
    return `webhook rejected: ${this.reason}`
  }
}

/** Signed, but not the payload shape we know: answered 400, nothing changes. */
export class WebhookMalformed extends Data.TaggedError("WebhookMalformed")<{ readonly reason: string }> {
  override get message() {
    return `webhook body is malformed: ${this.reason}`
  }
}

/** Signed and well formed, but for another app than ours: answered 403, nothing recorded. */
export class WebhookForeignApp extends Data.TaggedError("WebhookForeignApp")<{ readonly appId: string }> {
  override get message() {
    return `webhook refused: appId ${JSON.stringify(this.appId.slice(0, 100))} is not this app's (SERVICE_CLIENT_ID, or SERVICE_APP_ID when set)`
  }
}

/** base64(HMAC-SHA256(raw body, client secret)), compared in constant time. */
export const verifySignature = (
  secret: Redacted.Redacted<string>,
  body: Uint8Array,
  signature: string | undefined
): Either.Either<void, WebhookSignatureInvalid> => {
  if (signature === undefined || signature.length === 0) return Either.left(new WebhookSignatureInvalid({ reason: "no signature header" }))
  const expected = crypto.createHmac("sha256", Redacted.value(secret)).update(body).digest()
  const given = Buffer.from(signature.trim(), "base64")
  return given.length === expected.length && crypto.timingSafeEqual(given, expected)
    ? Either.void
    : Either.left(new WebhookSignatureInvalid({ reason: "signature does not match the body" }))
}

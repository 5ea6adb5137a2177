import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import { TokenKeyMismatch } from "./errors.js"
import { TokenKey } from "./TokenKey.js"

const ivLength = 12
const tagLength = 16

/** AES-256-GCM over secrets at rest: `iv (12) || tag (16) || ciphertext`, a fresh random IV per value. */
export const encryptWith = (key: Redacted.Redacted<Buffer>, plaintext: Redacted.Redacted<string>): Buffer => {
  const iv = crypto.randomBytes(ivLength)
  const cipher = crypto.createCipheriv("aes-256-gcm", Redacted.value(key), iv)
  const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body])
}

export const decryptWith = (
  key: Redacted.Redacted<Buffer>,
  stored: Uint8Array,
  what: string
): Effect.Effect<Redacted.Redacted<string>, TokenKeyMismatch> =>
  Effect.try({
    try: () => {
      const bytes = Buffer.from(stored)
      if (bytes.length < ivLength + tagLength) throw new Error("too short")
      const decipher = crypto.createDecipheriv("aes-256-gcm", Redacted.value(key), bytes.subarray(0, ivLength))
      decipher.setAuthTag(bytes.subarray(ivLength, ivLength + tagLength))
      const plain = Buffer.concat([decipher.update(bytes.subarray(ivLength + tagLength)), decipher.final()])
      return Redacted.make(plain.toString("utf8"))
    },
    catch: () => new TokenKeyMismatch({ what })
  })

export class TokenCipher extends Context.Tag("account-sync/TokenCipher")<
  TokenCipher,
  {
    readonly encrypt: (plaintext: Redacted.Redacted<string>) => Buffer
    /** `what` names the value for the error ("refresh token of account X"). */
    readonly decrypt: (stored: Uint8Array, what: string) => Effect.Effect<Redacted.Redacted<string>, TokenKeyMismatch>
  }
>() {}

export const TokenCipherLive = Layer.effect(
  TokenCipher,
  Effect.map(TokenKey, (encryptionKey) => ({
    encrypt: (plaintext) => encryptWith(encryptionKey, plaintext),
    decrypt: (stored, what) => decryptWith(encryptionKey, stored, what)
  }))
)

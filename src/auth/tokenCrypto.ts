import { Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { TokenKeyMismatch } from "./errors.js"
import { allKeys, type TokenKeyEntry, type TokenKeyRing } from "./TokenKey.js"

const ivLength = 12
const tagLength = 16
/** Marks a value written with a key id (format 1); values written before key ids have no header. */
const magic = 0xa5
const format = 0x01
const keyIdLength = 4
const headerLength = 2 + keyIdLength

/**
 * AES-256-GCM over secrets at rest, a fresh random IV per value:
 * `0xA5 0x01 || key id (4) || iv (12) || tag (16) || ciphertext`, the 6-byte header authenticated with the value.
 * Values written before key ids (`iv || tag || ciphertext`, no header) are still read.
 */
/** The header of every value written under `key`. */
export const headerOf = (key: TokenKeyEntry): Buffer => Buffer.concat([Buffer.from([magic, format]), Buffer.from(key.id, "hex")])

export const encryptWith = (key: TokenKeyEntry, plaintext: Redacted.Redacted<string>): Buffer => {
  const header = headerOf(key)
  const iv = crypto.randomBytes(ivLength)
  const cipher = crypto.createCipheriv("aes-256-gcm", Redacted.value(key.secret), iv)
  cipher.setAAD(header)
  const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final()])
  return Buffer.concat([header, iv, cipher.getAuthTag(), body])
}

/** The id of the key a value was written with, when it carries one (values from before key ids do not). */
export const keyIdOfValue = (stored: Uint8Array): Option.Option<string> => {
  const bytes = Buffer.from(stored)
  return bytes.length >= headerLength + ivLength + tagLength && bytes[0] === magic && bytes[1] === format
    ? Option.some(bytes.subarray(2, headerLength).toString("hex"))
    : Option.none()
}

const open = (secret: Redacted.Redacted<Buffer>, bytes: Buffer, aad: Buffer | undefined): Option.Option<Redacted.Redacted<string>> => {
  if (bytes.length < ivLength + tagLength) return Option.none()
  try {
    const decipher = crypto.createDecipheriv("aes-256-gcm", Redacted.value(secret), bytes.subarray(0, ivLength))
    if (aad) decipher.setAAD(aad)
    decipher.setAuthTag(bytes.subarray(ivLength, ivLength + tagLength))
    const plain = Buffer.concat([decipher.update(bytes.subarray(ivLength + tagLength)), decipher.final()])
    return Option.some(Redacted.make(plain.toString("utf8")))
  } catch {
    return Option.none()
  }
}

/**
 * Decrypts with the ring's key named by the value's key id; a value without one (or whose header happens to look
 * like one) is tried under every key in the old format. GCM authenticates, so a wrong key never yields a value.
 */
export const decryptWith = (
  ring: TokenKeyRing,
  stored: Uint8Array,
  what: string
): Effect.Effect<Redacted.Redacted<string>, TokenKeyMismatch> =>
  Effect.suspend(() => {
    const bytes = Buffer.from(stored)
    const keys = allKeys(ring)
    const id = keyIdOfValue(bytes)
    if (Option.isSome(id)) {
      const key = keys.find((k) => k.id === id.value)
      if (key) {
        const plain = open(key.secret, bytes.subarray(headerLength), bytes.subarray(0, headerLength))
        if (Option.isSome(plain)) return Effect.succeed(plain.value)
      }
    }
    for (const key of keys) {
      const plain = open(key.secret, bytes, undefined)
      if (Option.isSome(plain)) return Effect.succeed(plain.value)
    }
    return Effect.fail(new TokenKeyMismatch({ what, ...(Option.isSome(id) ? { keyId: id.value } : {}) }))
  })

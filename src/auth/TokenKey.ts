import { Config, ConfigError, Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseConfig, TokenEncryptionKey, TokenEncryptionOldKeys } from "../config.js"

/** One AES-256-GCM key (32 bytes) and its id. */
export interface TokenKeyEntry {
  /** 8 hex characters derived from the key (an HMAC under it, not the key): written in front of every ciphertext. */
  readonly id: string
  readonly secret: Redacted.Redacted<Buffer>
}

/** The keys that encrypt tokens and PKCE verifiers at rest: `current` writes; every key reads. */
export interface TokenKeyRing {
  readonly current: TokenKeyEntry
  /** Keys accepted for reading only, during a rotation (TOKEN_ENCRYPTION_OLD_KEYS). */
  readonly old: ReadonlyArray<TokenKeyEntry>
}

const hmac = (secret: Redacted.Redacted<Buffer>, label: string) => crypto.createHmac("sha256", Redacted.value(secret)).update(label).digest()

/** The key's id: the first 4 bytes of HMAC-SHA256(key, a constant), hex. Names a key without revealing it. */
export const keyIdOf = (secret: Redacted.Redacted<Buffer>): string => hmac(secret, "account-sync token key id").subarray(0, 4).toString("hex")

/** The key check value stored in `token_keys`: HMAC-SHA256(key, a constant). Proves a key without revealing it. */
export const checkValueOf = (secret: Redacted.Redacted<Buffer>): Buffer => hmac(secret, "account-sync token key check v1")

export const keyEntry = (secret: Redacted.Redacted<Buffer>): TokenKeyEntry => ({ id: keyIdOf(secret), secret })

/** A ring of `current` and `old` (an old key equal to the current one, or repeated, is dropped). */
export const keyRing = (current: Redacted.Redacted<Buffer>, old: ReadonlyArray<Redacted.Redacted<Buffer>> = []): TokenKeyRing => {
  const entry = keyEntry(current)
  const seen = new Set([entry.id])
  const others: Array<TokenKeyEntry> = []
  for (const secret of old) {
    const e = keyEntry(secret)
    if (seen.has(e.id)) continue
    seen.add(e.id)
    others.push(e)
  }
  return { current: entry, old: others }
}

/** Every key of the ring, the current one first. */
export const allKeys = (ring: TokenKeyRing): ReadonlyArray<TokenKeyEntry> => [ring.current, ...ring.old]

/** The token encryption keys. */
export class TokenKey extends Context.Tag("account-sync/TokenKey")<TokenKey, TokenKeyRing>() {
  /**
   * From TOKEN_ENCRYPTION_KEY (and TOKEN_ENCRYPTION_OLD_KEYS). With DATABASE_URL it is required; without (the
   * embedded database) it may come from the environment or is kept beside the data in `<DATA_DIR>/token-encryption.key`.
   */
  static readonly layer = Layer.effect(
    TokenKey,
    Effect.gen(function* () {
      const database = yield* DatabaseConfig
      const old = yield* TokenEncryptionOldKeys
      const configured = yield* Config.option(TokenEncryptionKey)
      if (Option.isSome(configured)) return keyRing(configured.value, old)
      if (Option.isSome(database.url)) return yield* Effect.fail(missingWithDatabaseUrl)
      return keyRing(yield* embeddedKey(database.dataDir), old)
    })
  )
}

/**
 * The key settings checked without creating anything (no key file): TOKEN_ENCRYPTION_KEY well formed, required with
 * DATABASE_URL, and TOKEN_ENCRYPTION_OLD_KEYS. Commands load it before they open the database.
 */
export const TokenKeySettings = Effect.gen(function* () {
  const database = yield* DatabaseConfig
  yield* TokenEncryptionOldKeys
  const configured = yield* Config.option(TokenEncryptionKey)
  if (Option.isNone(configured) && Option.isSome(database.url)) return yield* Effect.fail(missingWithDatabaseUrl)
})

/** With DATABASE_URL the key is the operator's to keep: nothing is generated. */
export const missingWithDatabaseUrl = ConfigError.MissingData(
  ["TOKEN_ENCRYPTION_KEY"],
  "DATABASE_URL is set, so the tokens need a key of your own: generate one with `openssl rand -base64 32` and put it in .env (see config/.env.example)"
)

export const keyFileName = "token-encryption.key"

/** Read `<DATA_DIR>/token-encryption.key`, or create it (mode 0600) on first start. Only the path is logged. */
const embeddedKey = (dataDir: string) =>
  Effect.gen(function* () {
    const file = path.resolve(dataDir, keyFileName)
    const existing = yield* Effect.sync(() => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined))
    if (existing !== undefined) {
      const bytes = Buffer.from(existing, "base64")
      if (bytes.length !== 32) {
        return yield* Effect.fail(
          ConfigError.InvalidData([], `TOKEN_ENCRYPTION_KEY: ${file} does not hold 32 bytes encoded as base64 (e.g. \`openssl rand -base64 32\`)`)
        )
      }
      return Redacted.make(bytes)
    }
    const bytes = crypto.randomBytes(32)
    yield* Effect.sync(() => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, `${bytes.toString("base64")}\n`, { mode: 0o600, flag: "wx" })
    })
    yield* Effect.logWarning(`generated a new token encryption key at ${file} (embedded database); back it up with the data`)
    return Redacted.make(bytes)
  })

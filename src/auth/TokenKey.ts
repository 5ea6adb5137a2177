import { Config, ConfigError, Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseConfig, TokenEncryptionKey } from "../config.js"

/** The AES-256-GCM key (32 bytes) that encrypts tokens and PKCE verifiers at rest. */
export class TokenKey extends Context.Tag("account-sync/TokenKey")<TokenKey, Redacted.Redacted<Buffer>>() {
  /**
   * From TOKEN_ENCRYPTION_KEY. With DATABASE_URL it is required; without (the embedded database) it may come from
   * the environment or is kept beside the data in `<DATA_DIR>/token-encryption.key`.
   */
  static readonly layer = Layer.effect(
    TokenKey,
    Effect.gen(function* () {
      const database = yield* DatabaseConfig
      const configured = yield* Config.option(TokenEncryptionKey)
      if (Option.isSome(configured)) return configured.value
      if (Option.isSome(database.url)) return yield* TokenEncryptionKey // fails with the "missing" line naming the key
      return yield* embeddedKey(database.dataDir)
    })
  )
}

const keyFileName = "token-encryption.key"

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

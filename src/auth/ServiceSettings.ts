import { Config, ConfigError, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseConfig, ServiceConfig, TokenEncryptionKey, TokenPolicyConfig } from "../config.js"

/** The app's credentials and endpoints, the token encryption key, and the token policy: everything auth needs. */
export interface ServiceSettingsShape extends ServiceConfig {
  /** 32 bytes, AES-256-GCM. */
  readonly encryptionKey: Redacted.Redacted<Buffer>
  /** Refresh a token once its `exp` is closer than this. */
  readonly refreshSkew: Duration.Duration
  /** Per request to the token endpoint (and the identity query). */
  readonly requestTimeout: Duration.Duration
}

export class ServiceSettings extends Context.Tag("account-sync/ServiceSettings")<ServiceSettings, ServiceSettingsShape>() {}

export const defaultTokenPolicy = { refreshSkew: Duration.minutes(5), requestTimeout: Duration.seconds(10) } as const

const keyFileName = "token-encryption.key"

/**
 * The embedded database keeps its key beside its data: read `<DATA_DIR>/token-encryption.key`, or create it
 * (mode 0600) on first start. Only the path is logged.
 */
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

/**
 * From the environment. With `DATABASE_URL`, `TOKEN_ENCRYPTION_KEY` is required; without it (embedded database)
 * the key may come from the environment or is kept in `<DATA_DIR>/token-encryption.key`.
 */
export const ServiceSettingsFromEnv = Layer.effect(
  ServiceSettings,
  Effect.gen(function* () {
    const service = yield* ServiceConfig
    const policy = yield* TokenPolicyConfig
    const database = yield* DatabaseConfig
    const configuredKey = yield* Config.option(TokenEncryptionKey)
    const encryptionKey = Option.isSome(configuredKey)
      ? configuredKey.value
      : Option.isSome(database.url)
        ? yield* TokenEncryptionKey // fails with the "missing" line naming the key
        : yield* embeddedKey(database.dataDir)
    return { ...service, ...policy, encryptionKey }
  })
)

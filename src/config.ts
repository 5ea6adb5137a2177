import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"
import { schemaNameProblem } from "./db/schemaName.js"

/** Where the warehouse lives: a real Postgres (`DATABASE_URL`) or the embedded one under `DATA_DIR`. */
export const DatabaseConfig = Config.all({
  url: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  /** A plain identifier that is neither a keyword nor a system schema (`schemaNameProblem` says which). */
  schema: Config.string("DB_SCHEMA").pipe(
    Config.withDefault("account_sync"),
    Config.mapOrFail((name) => {
      const problem = schemaNameProblem(name)
      return problem === undefined ? Either.right(name) : Either.left(ConfigError.InvalidData([], problem))
    })
  ),
  prepareStatements: Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  poolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.withDefault(10),
    Config.validate({ message: "DATABASE_POOL_SIZE: expected a whole number of at least 2", validation: (n) => n >= 2 })
  ),
  /** How the program's sessions show in pg_stat_activity. */
  applicationName: Config.string("DATABASE_APPLICATION_NAME").pipe(Config.withDefault("account-sync"))
})
export type DatabaseConfig = Config.Config.Success<typeof DatabaseConfig>

/**
 * Where `query` reads: `QUERY_DATABASE_URL` (a role with SELECT only on DB_SCHEMA, see config/postgres/roles.sql) when
 * set, else `DATABASE_URL`, else the embedded database under DATA_DIR.
 */
export const QueryDatabaseConfig = Config.all({
  queryUrl: Config.option(Config.redacted("QUERY_DATABASE_URL")),
  database: DatabaseConfig
})
export type QueryDatabaseConfig = Config.Config.Success<typeof QueryDatabaseConfig>

const isoDate = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

const httpUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({
      message: `${name}: expected an absolute http(s) URL, e.g. https://api.example.com`,
      validation: (s) => {
        try {
          const u = new URL(s)
          return u.protocol === "http:" || u.protocol === "https:"
        } catch {
          return false
        }
      }
    })
  )

const baseUrl = httpUrl("SERVICE_BASE_URL").pipe(Config.map((s) => s.replace(/\/+$/, "")))

/** Where the service's GraphQL endpoint is, the API version we speak, and how long one GraphQL request may take. */
export const ServiceEndpointConfig = Config.all({
  baseUrl,
  graphqlVersion: Config.string("SERVICE_GRAPHQL_VERSION").pipe(
    Config.withDefault("2025-01-20"),
    Config.validate({ message: "SERVICE_GRAPHQL_VERSION: expected a date in the form YYYY-MM-DD", validation: (s) => isoDate.test(s) })
  ),
  requestTimeout: Config.duration("GRAPHQL_REQUEST_TIMEOUT").pipe(Config.withDefault(Duration.seconds(30)))
})
export type ServiceEndpointConfig = Config.Config.Success<typeof ServiceEndpointConfig>

/** The app as an OAuth client of the service: credentials, callback, and how tokens are requested and refreshed. */
export const OAuthClientConfig = Config.all({
  baseUrl,
  clientId: Config.nonEmptyString("SERVICE_CLIENT_ID"),
  // not Config.redacted(...): that also hides the "missing" message that names the key
  clientSecret: Config.nonEmptyString("SERVICE_CLIENT_SECRET").pipe(Config.map(Redacted.make)),
  redirectUri: httpUrl("SERVICE_REDIRECT_URI"),
  /**
   * The app's id as the service's webhooks carry it (`appId`), when it is not the client id: a delivery for any other
   * app is refused. SERVICE_CLIENT_ID is always taken as ours.
   */
  appId: Config.option(Config.nonEmptyString("SERVICE_APP_ID")),
  /**
   * PKCE on the flows we start (SERVICE_PKCE, default true). Only for apps that opted out of PKCE in the developer
   * portal: an app setting, never something a visitor chooses.
   */
  pkce: Config.boolean("SERVICE_PKCE").pipe(Config.withDefault(true)),
  /** Per request to the token endpoint. */
  requestTimeout: Config.duration("TOKEN_REQUEST_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
  /** Refresh a token once its `exp` is closer than this. */
  refreshSkew: Config.duration("TOKEN_REFRESH_SKEW").pipe(Config.withDefault(Duration.minutes(5)))
})
export type OAuthClientConfig = Config.Config.Success<typeof OAuthClientConfig>

const base64Key = (text: string, problem: string): Either.Either<Redacted.Redacted<Buffer>, ConfigError.ConfigError> => {
  const bytes = Buffer.from(text, "base64")
  return bytes.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(text.trim())
    ? Either.right(Redacted.make(bytes))
    : Either.left(ConfigError.InvalidData([], problem))
}

/** 32 random bytes, base64: the AES-256-GCM key that encrypts tokens and PKCE verifiers at rest. */
export const TokenEncryptionKey = Config.redacted("TOKEN_ENCRYPTION_KEY").pipe(
  Config.mapOrFail((r) =>
    base64Key(Redacted.value(r), "TOKEN_ENCRYPTION_KEY: expected 32 bytes encoded as base64 (e.g. `openssl rand -base64 32`)")
  )
)

/**
 * Keys that tokens may still be stored under after a rotation, comma-separated (base64, 32 bytes each): read, never
 * written with. Empty by default.
 */
export const TokenEncryptionOldKeys = Config.redacted("TOKEN_ENCRYPTION_OLD_KEYS").pipe(
  Config.withDefault(Redacted.make("")),
  Config.mapOrFail((r) =>
    Either.all(
      Redacted.value(r)
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part.length > 0)
        .map((part, i) =>
          base64Key(part, `TOKEN_ENCRYPTION_OLD_KEYS: key ${i + 1} is not 32 bytes encoded as base64 (expected such keys separated by commas)`)
        )
    )
  )
)

/** Renders a ConfigError as one line per problem that names the key and the expected form. */
export const formatConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "MissingData":
        lines.push(e.path.length > 0 ? `configuration: ${e.path.join(".")} is missing: ${e.message}` : `configuration: ${e.message}`)
        return
      case "InvalidData":
      case "SourceUnavailable":
      case "Unsupported":
        lines.push(e.path.length > 0 ? `configuration: ${e.path.join(".")} is invalid: ${e.message}` : `configuration: invalid ${e.message}`)
        return
    }
  }
  walk(error)
  return [...new Set(lines)].join("\n")
}

export const optionalString = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

const positiveDuration = (name: string, fallback: Duration.Duration) =>
  Config.duration(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: expected a duration above zero, e.g. 10 seconds`, validation: (d) => Duration.toMillis(d) > 0 })
  )

/** The Node HTTP server's limits: how long a request, its headers and an idle kept-alive connection may take; open connections. */
export const HttpLimitsConfig = Config.all({
  requestTimeout: positiveDuration("HTTP_REQUEST_TIMEOUT", Duration.seconds(30)),
  headersTimeout: positiveDuration("HTTP_HEADERS_TIMEOUT", Duration.seconds(10)),
  keepAliveTimeout: positiveDuration("HTTP_KEEP_ALIVE_TIMEOUT", Duration.seconds(5)),
  maxConnections: Config.integer("HTTP_MAX_CONNECTIONS").pipe(
    Config.withDefault(1_000),
    Config.validate({ message: "HTTP_MAX_CONNECTIONS: expected a whole number of at least 1", validation: (n) => n >= 1 })
  )
}).pipe(
  Config.validate({
    message: "HTTP_HEADERS_TIMEOUT: expected at most HTTP_REQUEST_TIMEOUT",
    validation: (l) => Duration.lessThanOrEqualTo(l.headersTimeout, l.requestTimeout)
  })
)
export type HttpLimits = Config.Config.Success<typeof HttpLimitsConfig>

/** Where `serve` listens; METRICS_PORT, when set, takes /metrics and /readyz off the public port. */
export const HttpServerConfig = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  metricsPort: Config.option(Config.port("METRICS_PORT")),
  limits: HttpLimitsConfig
})
export type HttpServerConfig = Config.Config.Success<typeof HttpServerConfig>

/**
 * Bounds on what anonymous visitors can make `serve` do: requests to /oauth/start and /oauth/callback per client
 * address and minute (a token bucket), pending flows kept at once, and whether the client address is taken from
 * X-Forwarded-For (behind a reverse proxy that sets it).
 */
export const AnonymousLimitsConfig = Config.all({
  perMinute: Config.integer("OAUTH_RATE_LIMIT").pipe(
    Config.withDefault(20),
    Config.validate({ message: "OAUTH_RATE_LIMIT: expected a whole number of requests per minute, at least 1", validation: (n) => n >= 1 })
  ),
  pendingMax: Config.integer("OAUTH_PENDING_MAX").pipe(
    Config.withDefault(1_000),
    Config.validate({ message: "OAUTH_PENDING_MAX: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  trustForwardedFor: Config.boolean("HTTP_TRUST_PROXY").pipe(Config.withDefault(false))
})
export type AnonymousLimitsSettings = Config.Config.Success<typeof AnonymousLimitsConfig>

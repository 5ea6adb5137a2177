import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"
import { schemaNameProblem } from "./schemaName.js"

/**
 * A Postgres connection string, checked at load so a typo is a configuration error naming the key (exit 2), not a
 * DNS failure later. Its value is never echoed: it may hold a password.
 */
const postgresUrl = (name: string) =>
  Config.redacted(name).pipe(
    Config.mapOrFail((url) => {
      const problem = postgresUrlProblem(Redacted.value(url))
      return problem === undefined ? Either.right(url) : Either.left(ConfigError.InvalidData([name], problem))
    })
  )

export const postgresUrlProblem = (text: string): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "expected a postgres:// URL, e.g. postgres://user:password@host:5432/database"
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return `expected a postgres:// URL, e.g. postgres://user:password@host:5432/database (this one starts with ${url.protocol}//)`
  }
  if (url.hostname === "" && !url.searchParams.has("host")) return "the URL names no host, e.g. postgres://user:password@host:5432/database"
  return undefined
}

/** Where the warehouse lives: a real Postgres (`DATABASE_URL`) or the embedded one under `DATA_DIR`. */
export const DatabaseConfig = Config.all({
  url: Config.option(postgresUrl("DATABASE_URL")),
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

const positiveDuration = (name: string, fallback: Duration.Duration) =>
  Config.duration(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: expected a duration above zero, e.g. 10 seconds`, validation: (d) => Duration.toMillis(d) > 0 })
  )

/**
 * Where `query` reads: `QUERY_DATABASE_URL` (a role with SELECT only on DB_SCHEMA, see config/postgres/roles.sql) when
 * set, else `DATABASE_URL`, else the embedded database under DATA_DIR.
 */
export const QueryDatabaseConfig = Config.all({
  queryUrl: Config.option(postgresUrl("QUERY_DATABASE_URL")),
  database: DatabaseConfig,
  /** The longest a statement of `query` runs (Postgres's statement_timeout), and a transaction of it stays idle. */
  timeout: positiveDuration("QUERY_TIMEOUT", Duration.seconds(60)).pipe(
    // Postgres keeps statement_timeout in milliseconds as a 32-bit integer
    Config.validate({ message: "QUERY_TIMEOUT: expected at most 24 days, e.g. 10 minutes", validation: (d) => Duration.toMillis(d) <= 2_147_483_647 })
  )
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

/** The API version we pin (SERVICE_GRAPHQL_VERSION), alone: what status and the metrics compare answers with. */
export const GraphqlVersionConfig = Config.string("SERVICE_GRAPHQL_VERSION").pipe(
  Config.withDefault("2025-01-20"),
  Config.validate({ message: "SERVICE_GRAPHQL_VERSION: expected a date in the form YYYY-MM-DD", validation: (s) => isoDate.test(s) })
)

/** Where the service's GraphQL endpoint is, the API version we speak, and how long one GraphQL request may take. */
export const ServiceEndpointConfig = Config.all({
  baseUrl,
  graphqlVersion: GraphqlVersionConfig,
  requestTimeout: positiveDuration("GRAPHQL_REQUEST_TIMEOUT", Duration.seconds(30)),
  /**
   * What an answer from another API version than SERVICE_GRAPHQL_VERSION means (the service answers a removed version
   * with its oldest supported one): `fail` (default) fails the run, `allow` goes on with it (recorded and logged).
   */
  versionReplaced: Config.literal("fail", "allow")("SERVICE_GRAPHQL_VERSION_REPLACED").pipe(Config.withDefault("fail" as const)),
  /** The largest GraphQL answer read (bytes): a page is far smaller; a larger answer fails the request, unread. */
  maxResponseBytes: Config.integer("GRAPHQL_MAX_RESPONSE_BYTES").pipe(
    Config.withDefault(32 * 1024 * 1024),
    Config.validate({ message: "GRAPHQL_MAX_RESPONSE_BYTES: expected a whole number of bytes, at least 65536", validation: (n) => n >= 65_536 })
  )
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
  requestTimeout: positiveDuration("TOKEN_REQUEST_TIMEOUT", Duration.seconds(10)),
  /** Refresh a token once its `exp` is closer than this. */
  refreshSkew: positiveDuration("TOKEN_REFRESH_SKEW", Duration.minutes(5))
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

/** Renders a ConfigError as one line per problem that names the key, what is wrong and where to set it. */
export { formatConfigError } from "./configErrors.js"

export const optionalString = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))


/** The Node HTTP server's limits: how long a request, its headers and an idle kept-alive connection may take; open connections. */
export const HttpLimitsConfig = Config.all({
  requestTimeout: positiveDuration("HTTP_REQUEST_TIMEOUT", Duration.seconds(30)),
  headersTimeout: positiveDuration("HTTP_HEADERS_TIMEOUT", Duration.seconds(10)),
  // longer than the idle timeout of what sends to us: a connection closed as idle while a delivery is on its way to us
  // loses it (the service does not send a webhook again), and proxies in front keep theirs 60 s (nginx, cloud LBs)
  keepAliveTimeout: positiveDuration("HTTP_KEEP_ALIVE_TIMEOUT", Duration.seconds(65)),
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
 * address and minute (a token bucket), pending flows kept at once per address and in all, and whether the client address is taken from
 * X-Forwarded-For (behind a reverse proxy that sets it).
 */
export const AnonymousLimitsConfig = Config.all({
  perMinute: Config.integer("OAUTH_RATE_LIMIT").pipe(
    Config.withDefault(20),
    Config.validate({ message: "OAUTH_RATE_LIMIT: expected a whole number of requests per minute, at least 1", validation: (n) => n >= 1 })
  ),
  pendingPerAddress: Config.integer("OAUTH_PENDING_PER_ADDRESS").pipe(
    Config.withDefault(10),
    Config.validate({ message: "OAUTH_PENDING_PER_ADDRESS: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  pendingMax: Config.integer("OAUTH_PENDING_MAX").pipe(
    Config.withDefault(100_000),
    Config.validate({ message: "OAUTH_PENDING_MAX: expected a whole number of at least 1", validation: (n) => n >= 1 })
  ),
  trustForwardedFor: Config.boolean("HTTP_TRUST_PROXY").pipe(Config.withDefault(false))
})
export type AnonymousLimitsSettings = Config.Config.Success<typeof AnonymousLimitsConfig>

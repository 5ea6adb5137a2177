import { Command } from "@effect/cli"
import { Config, ConfigError, Console, Effect, Either, Option, Redacted } from "effect"
import pg from "pg"
import { authorizationUrl, newCodeVerifier } from "../auth/Authorization.js"
import { checkValueOf, keyIdOf } from "../auth/TokenKey.js"
import { DatabaseConfig, formatConfigError, GraphqlVersionConfig, OAuthClientConfig, ServiceEndpointConfig, TokenEncryptionKey } from "../config.js"
import { databaseAddress } from "../db/databaseAddress.js"
import { queryRoleOf } from "../db/queryRole.js"
import { SyncSettingsConfig } from "../sync/SyncSettings.js"
import { refusalOfAuthorization } from "./connect.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"
import { safe } from "./output/text.js"

/** One line of the report: what was checked, whether it holds, and what was found. */
interface Finding {
  readonly ok: boolean
  readonly what: string
  readonly detail: string
}

const found = (ok: boolean, what: string, detail: string): Finding => ({ ok, what, detail })

/** `use` with a connection of its own to `url`, closed afterwards; every statement bounded by the check's timeout. */
const withClient = <A>(url: string, use: (client: pg.Client) => Promise<A>) =>
  Effect.tryPromise(async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
    client.on("error", () => {})
    await client.connect()
    try {
      return await use(client)
    } finally {
      await client.end()
    }
  })
const timeoutMs = 5_000
const neededNode = 24

/** A setting group, read as the commands read it: its error in the commands' own words. */
const setting = <A>(config: Config.Config<A>) =>
  Effect.either(config).pipe(Effect.map(Either.mapLeft((e: ConfigError.ConfigError) => formatConfigError(e))))

const nodeVersion = Effect.sync(() => {
  const major = Number(process.versions.node.split(".")[0])
  return found(major >= neededNode, "Node", `${process.version}${major >= neededNode ? "" : `: account-sync needs ${neededNode} or later`}`)
})

const configuration = Effect.gen(function* () {
  const problems = [
    ...Either.getLeft(yield* setting(DatabaseConfig)).pipe(Option.toArray),
    ...Either.getLeft(yield* setting(SyncSettingsConfig)).pipe(Option.toArray),
    ...Either.getLeft(yield* setting(GraphqlVersionConfig)).pipe(Option.toArray)
  ]
  return found(problems.length === 0, "configuration", problems.length === 0 ? "the database and sync settings parse" : problems.join("; "))
})

/** What the database lets DATABASE_URL's role do, read-only: each command's needs. */
const postgres = Effect.gen(function* () {
  const database = yield* Effect.orDie(DatabaseConfig)
  const where = databaseAddress(database.url, database.dataDir)
  if (Option.isNone(database.url)) return [found(true, "Postgres", `${where} (no DATABASE_URL; one process at a time)`)]
  const url = Redacted.value(database.url.value)
  const answer = yield* withClient(url, async (client) => {
    const { rows } = await client.query<{ role: string; version: string; schema_exists: boolean; can_create: boolean; migrated: boolean; query_role: boolean }>(
      `SELECT current_user AS role, split_part(version(), ' ', 2) AS version,
         EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema_exists,
         CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) THEN has_schema_privilege($1, 'CREATE')
              ELSE has_database_privilege(current_database(), 'CREATE') END AS can_create,
         to_regclass(quote_ident($1) || '.connections') IS NOT NULL AS migrated,
         EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $2) AS query_role`,
      [database.schema, queryRoleOf(database.schema)]
    )
    return rows[0]!
  }).pipe(Effect.either)
  if (Either.isLeft(answer)) {
    const cause = answer.left.error
    return [found(false, "Postgres", `${where} does not answer: ${cause instanceof Error ? cause.message : String(cause)}`)]
  }
  const r = answer.right
  return [
    found(true, "Postgres", `${where}: PostgreSQL ${r.version}, as role ${r.role}`),
    found(
      r.can_create || r.migrated,
      "privileges",
      `${r.can_create ? `may create in ${r.schema_exists ? `schema ${database.schema}` : "the database"} (migrate, and every command that migrates first)` : `may not create ${r.schema_exists ? `in schema ${database.schema}` : "schemas"}`}; ` +
        `schema ${database.schema} ${r.migrated ? "migrated: status, sync, backfill, serve, worker can run" : "not migrated yet (the first command migrates it)"}; ` +
        `query: ${r.query_role ? `role ${queryRoleOf(database.schema)} exists` : "QUERY_DATABASE_URL or the query role (made by migrate) needed"}`
    )
  ]
})

/** The token key's form, and whether it is the key the stored tokens are written under (read only: nothing recorded). */
const tokenKey = Effect.gen(function* () {
  const key = yield* Effect.either(Config.option(TokenEncryptionKey))
  if (Either.isLeft(key)) return found(false, "token key", formatConfigError(key.left))
  const database = yield* Effect.orDie(DatabaseConfig)
  if (Option.isNone(key.right)) {
    return Option.isSome(database.url)
      ? found(false, "token key", "TOKEN_ENCRYPTION_KEY is not set; with DATABASE_URL it must be (`openssl rand -base64 32`)")
      : found(true, "token key", "the embedded database's own (DATA_DIR/token-encryption.key)")
  }
  const id = keyIdOf(key.right.value)
  if (Option.isNone(database.url)) return found(true, "token key", `key id ${id}`)
  const url = Redacted.value(database.url.value)
  const recorded = yield* withClient(url, async (client) => {
    const exists = await client.query<{ t: string | null }>("SELECT to_regclass(quote_ident($1) || '.token_keys')::text AS t", [database.schema])
    if (exists.rows[0]?.t == null) return undefined
    const { rows } = await client.query<{ key_id: string; check_value: Buffer }>(`SELECT key_id, check_value FROM ${exists.rows[0].t}`)
    return rows[0]
  }).pipe(Effect.orElseSucceed(() => undefined))
  if (recorded === undefined) return found(true, "token key", `key id ${id}; no tokens recorded yet`)
  const fits = recorded.key_id === id && Buffer.compare(Buffer.from(recorded.check_value), checkValueOf(key.right.value)) === 0
  return found(fits, "token key", fits ? `key id ${id}, the key the stored tokens are written under` : `key id ${id}, but the stored tokens are written under key id ${recorded.key_id}`)
})

/** The service answers at SERVICE_BASE_URL, and its authorization endpoint takes our client id and redirect URI. */
const service = Effect.gen(function* () {
  const endpoint = yield* setting(ServiceEndpointConfig)
  const client = yield* setting(OAuthClientConfig)
  if (Either.isLeft(endpoint) || Either.isLeft(client)) {
    const problem = Either.isLeft(endpoint) ? endpoint.left : Either.isLeft(client) ? client.left : ""
    return [found(false, "service", `${problem} (only sync, backfill, connect, serve and worker need the service)`)]
  }
  const base = endpoint.right.baseUrl
  const reached = yield* Effect.tryPromise(() => fetch(base, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) })).pipe(Effect.either)
  if (Either.isLeft(reached)) {
    const cause = reached.left.error
    return [found(false, "service", `${base} (SERVICE_BASE_URL) does not answer: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`)]
  }
  const url = authorizationUrl({ baseUrl: base, clientId: client.right.clientId, redirectUri: client.right.redirectUri, codeVerifier: newCodeVerifier() })
  const refused = yield* refusalOfAuthorization(url, client.right.redirectUri)
  return [
    found(true, "service", `${base} (SERVICE_BASE_URL) answers (HTTP ${reached.right.status})`),
    found(
      refused === undefined,
      "redirect URI",
      refused === undefined ? `${client.right.redirectUri} accepted for client ${client.right.clientId}` : refused.message.replace(/^connect: /, "").replace(/; nothing was connected$/, "")
    )
  ]
})

/** `doctor`: one line per check, exit 1 when one fails. */
export const doctorCommand = withHelp(Command.make("doctor", {}, () =>
  Effect.gen(function* () {
    const findings = [yield* nodeVersion, yield* configuration, ...(yield* postgres), yield* tokenKey, ...(yield* service)]
    const width = Math.max(...findings.map((f) => f.what.length))
    for (const f of findings) yield* Console.log(safe(`${f.ok ? "ok  " : "FAIL"}  ${f.what.padEnd(width)}  ${f.detail}`))
    const failed = findings.filter((f) => !f.ok).length
    if (failed > 0) return yield* new ExitWith({ code: ExitCodes.failure, message: `doctor: ${failed} check(s) failed` })
  })
), {
  purpose: "Check the set-up, one line a check: Node, settings, Postgres, the token key, the service.",
  details:
    "Node's version; the configuration; Postgres reachable, and what its role may do for each command; the token key (the one the stored tokens are written under); the service reachable, and the redirect URI accepted. Reads and asks only: nothing is created, migrated or recorded. Exit 1 when a check fails.",
  examples: ["account-sync doctor"]
})


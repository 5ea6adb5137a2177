import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import * as fs from "node:fs"
import { DEFAULT_API_VERSION, DEFAULT_WARN_DAYS } from "../emulator/ApiVersions.js"
import type { ApiVersionSpec } from "../emulator/ApiVersions.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp, withShownDefault } from "./help.js"
import { checkAtLeast, checkHttpUrl, checkPort } from "./optionChecks.js"

/** `account-sync emulator`: serves one app and N accounts until SIGINT/SIGTERM (see src/emulator/README.md). */

/** `--api-version VERSION[,removed=DATE][,schema=FILE]`: a version's spec, its schema read from the file. */
const apiVersionSpec = (text: string): Effect.Effect<ApiVersionSpec, ExitWith> =>
  Effect.gen(function* () {
    const [version, ...parts] = text.split(",").map((p) => p.trim())
    const bad = (why: string) => new ExitWith({ code: ExitCodes.usage, message: `--api-version ${JSON.stringify(text)}: ${why} (expected VERSION[,removed=YYYY-MM-DD][,schema=FILE])` })
    let spec: ApiVersionSpec = { version: version ?? "" }
    for (const part of parts) {
      const [key, value] = [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)]
      if (key === "removed") spec = { ...spec, removedAt: value }
      else if (key === "schema") {
        const sdl = yield* Effect.try({ try: () => fs.readFileSync(value, "utf8"), catch: (e) => bad(`cannot read the schema file ${value}: ${e instanceof Error ? e.message : String(e)}`) })
        spec = { ...spec, schema: sdl }
      } else return yield* bad(`unknown part ${JSON.stringify(part)}`)
    }
    return spec
  })

const DEFAULT_SECRET = "emulator-secret"

const port = Options.integer("port").pipe(Options.withPseudoName("PORT"), Options.withDescription("Port on 127.0.0.1, 0 for any free one"), withShownDefault(4010))
const clientId = Options.text("client-id").pipe(Options.withPseudoName("ID"), Options.withDescription("The app's client ID"), withShownDefault("emulator-client"))
const clientSecret = Options.redacted("client-secret").pipe(
  Options.withPseudoName("SECRET"),
  Options.optional,
  Options.withDescription(`The app's client secret (default: ${DEFAULT_SECRET})`)
)
const redirectUri = Options.text("redirect-uri").pipe(
  Options.withPseudoName("URL"),
  Options.withDescription("The app's OAuth Callback URL: SERVICE_REDIRECT_URI must be exactly this"),
  withShownDefault("http://127.0.0.1:8080/oauth/callback")
)
const webhookUrl = Options.text("webhook-url").pipe(Options.withPseudoName("URL"), Options.optional, Options.withDescription("Where APP_DISCONNECT webhooks are POSTed (default: none)"))
const accounts = Options.integer("accounts").pipe(Options.withPseudoName("N"), Options.withDescription("Business accounts to create (their ids are printed; 0 with --admin: create them later)"), withShownDefault(1))
const jobs = Options.integer("jobs").pipe(Options.withPseudoName("N"), Options.withDescription("Jobs per account (its other collections scale with it)"), withShownDefault(100))
const autoApprove = Options.boolean("auto-approve").pipe(
  Options.withDescription("Authorization requests are approved at once (account: login_hint, else the first)")
)
const rotation = Options.boolean("rotation").pipe(Options.withDescription("Refresh Token Rotation on for the app"))
const maxPoints = Options.integer("max-points").pipe(Options.withPseudoName("P"), Options.optional, Options.withDescription("Query cost bucket size (default: 10000, the service's)"))
const restoreRate = Options.integer("restore-rate").pipe(Options.withPseudoName("R"), Options.optional, Options.withDescription("Points restored per second (default: 500, the service's)"))
const admin = Options.boolean("admin").pipe(Options.withDescription("Serve the admin API at /__admin (RPC over HTTP; see EmulatorAdminClient)"))
const apiVersion = Options.text("api-version").pipe(
  Options.withPseudoName("SPEC"),
  Options.withDescription(
    "An API version to serve (repeatable; default: 2025-01-20 alone): VERSION[,removed=YYYY-MM-DD][,schema=FILE.graphql] (schema: the vendored subset unless given)"
  ),
  Options.repeated
)
const apiVersionWarnDays = Options.integer("api-version-warn-days").pipe(
  Options.withPseudoName("DAYS"),
  Options.optional,
  Options.withDescription("Days before its removal from which a version's answers carry extensions.versioning.warning (default: 90)")
)
const seed = Options.integer("seed").pipe(Options.withPseudoName("S"), Options.withDescription("Seed of the generated data"), withShownDefault(1))

const options = { port, clientId, clientSecret, redirectUri, webhookUrl, accounts, jobs, autoApprove, rotation, maxPoints, restoreRate, admin, apiVersion, apiVersionWarnDays, seed }
type EmulatorOptions = Command.Command.ParseConfig<typeof options>

const runEmulator = (o: EmulatorOptions) =>
    Effect.scoped(
      Effect.gen(function* () {
        const secret = Option.match(o.clientSecret, { onNone: () => DEFAULT_SECRET, onSome: Redacted.value })
        const versions = yield* Effect.forEach(o.apiVersion, apiVersionSpec)
        // loaded by this command only: the emulator (and its GraphQL executor) is no part of a sync's memory
        const { Emulator } = yield* Effect.promise(() => import("../emulator/Emulator.js"))
        const emulator = yield* Emulator.make({
          port: o.port,
          admin: o.admin,

          approval: { mode: o.autoApprove ? "auto" : "manual" },
          limits: {
            ...Option.match(o.maxPoints, { onNone: () => ({}), onSome: (maxPoints) => ({ maxPoints }) }),
            ...Option.match(o.restoreRate, { onNone: () => ({}), onSome: (restoreRate) => ({ restoreRate }) })
          }
        })
        if (versions.length > 0 || Option.isSome(o.apiVersionWarnDays)) {
          yield* emulator.admin
            .setApiVersions({
              versions: versions.length > 0 ? versions : [{ version: DEFAULT_API_VERSION }],
              warnDays: Option.getOrElse(o.apiVersionWarnDays, () => DEFAULT_WARN_DAYS)
            })
            .pipe(Effect.mapError((e) => new ExitWith({ code: ExitCodes.usage, message: `--api-version: ${e.reason}` })))
        }
        const { appId } = yield* emulator.admin.createApp({
          clientId: o.clientId,
          clientSecret: secret,
          redirectUri: o.redirectUri,
          rotation: o.rotation,
          ...Option.match(o.webhookUrl, { onNone: () => ({}), onSome: (webhookUrl) => ({ webhookUrl }) })
        })
        const created = []
        for (let i = 0; i < o.accounts; i++) {
          created.push(yield* emulator.admin.createAccount({ jobs: o.jobs, seed: o.seed * 1000 + i }))
        }
        const lines = [
          `account-sync emulator serving ${emulator.baseUrl}`,
          `  authorize: ${emulator.baseUrl}/api/oauth/authorize   token: ${emulator.baseUrl}/api/oauth/token   graphql: ${emulator.baseUrl}/api/graphql`,
          `  app: id ${appId}, client id ${o.clientId}, client secret ${Option.isNone(o.clientSecret) ? `${DEFAULT_SECRET} (default)` : "(as given)"}, redirect URI ${o.redirectUri}`,
          `       rotation ${o.rotation ? "on" : "off"}, approval ${o.autoApprove ? "auto (login_hint=<account id or admin email> picks the account)" : "manual (login + consent page)"}` +
            Option.match(o.webhookUrl, { onNone: () => "", onSome: (u) => `, webhook ${u}` }),
          `  API versions: ${versions.length > 0 ? versions.map((v) => `${v.version}${v.removedAt ? ` (removed ${v.removedAt})` : ""}`).join(", ") : `${DEFAULT_API_VERSION} (default)`}`,
          `  admin API: ${o.admin ? `POST ${emulator.baseUrl}/__admin (the RPC protocol of AdminRpcs)` : "off (start with --admin)"}`,
          ...created.map((a, i) => `  account ${i + 1}: id ${a.accountId}  name "${a.name}"  admin user ${a.adminUserId}  jobs ${o.jobs}`)
        ]
        yield* Console.log(lines.join("\n"))
        yield* Effect.logInfo("emulator ready").pipe(Effect.annotateLogs({ baseUrl: emulator.baseUrl }))
        return yield* Effect.never
      })
    )

export const emulatorCommand = withHelp(
  Command.make("emulator", options, (o) =>
    Effect.gen(function* () {
      const bad =
        checkPort("--port", o.port, { allowZero: true }) ??
        checkAtLeast("--accounts", o.accounts, 0) ??
        checkAtLeast("--jobs", o.jobs, 0) ??
        checkHttpUrl("--redirect-uri", o.redirectUri) ??
        (Option.isSome(o.webhookUrl) ? checkHttpUrl("--webhook-url", o.webhookUrl.value) : undefined)
      if (bad !== undefined) return yield* bad
      return yield* runEmulator(o)
    })
  ),
  {
    purpose: "Run the bundled emulator of the service (OAuth, GraphQL with query cost, webhooks) until interrupted.",
    details:
      "One app and N accounts of generated data on 127.0.0.1; it prints the app's settings and each account's id and name. Point SERVICE_BASE_URL, SERVICE_CLIENT_ID, SERVICE_CLIENT_SECRET and SERVICE_REDIRECT_URI at it (see the README: the emulator with your own Postgres).",
    examples: ["account-sync emulator --port 4010 --jobs 200 --auto-approve", "account-sync emulator --accounts 2 --restore-rate 5000 --admin"]
  }
)

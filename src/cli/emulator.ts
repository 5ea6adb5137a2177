import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import { Emulator } from "../emulator/Emulator.js"

/** `account-sync emulator`: serves one app and N accounts until SIGINT/SIGTERM (see src/emulator/README.md). */

const DEFAULT_SECRET = "emulator-secret"

const port = Options.integer("port").pipe(Options.withDefault(4010), Options.withDescription("Port on 127.0.0.1 (0 = any free port)"))
const clientId = Options.text("client-id").pipe(Options.withDefault("emulator-client"), Options.withDescription("The app's client ID"))
const clientSecret = Options.redacted("client-secret").pipe(Options.optional, Options.withDescription(`The app's client secret (default ${DEFAULT_SECRET})`))
const redirectUri = Options.text("redirect-uri").pipe(
  Options.withDefault("http://127.0.0.1:8080/oauth/callback"),
  Options.withDescription("The app's OAuth Callback URL (redirect_uri must match it exactly)")
)
const webhookUrl = Options.text("webhook-url").pipe(Options.optional, Options.withDescription("Where APP_DISCONNECT webhooks are POSTed"))
const accounts = Options.integer("accounts").pipe(Options.withDefault(1), Options.withDescription("Business accounts to create"))
const jobs = Options.integer("jobs").pipe(Options.withDefault(100), Options.withDescription("Seeded jobs per account"))
const autoApprove = Options.boolean("auto-approve").pipe(
  Options.withDescription("Authorization requests are approved at once (account: login_hint, else the first)")
)
const rotation = Options.boolean("rotation").pipe(Options.withDescription("Refresh Token Rotation on for the app"))
const maxPoints = Options.integer("max-points").pipe(Options.optional, Options.withDescription("Query cost bucket size (default 10000)"))
const restoreRate = Options.integer("restore-rate").pipe(Options.optional, Options.withDescription("Points restored per second (default 500)"))
const admin = Options.boolean("admin").pipe(Options.withDescription("Serve the admin API at /__admin (RPC over HTTP; see EmulatorAdminClient)"))
const seed = Options.integer("seed").pipe(Options.withDefault(1), Options.withDescription("Seed of the generated data"))

export const emulatorCommand = Command.make(
  "emulator",
  { port, clientId, clientSecret, redirectUri, webhookUrl, accounts, jobs, autoApprove, rotation, maxPoints, restoreRate, admin, seed },
  (o) =>
    Effect.scoped(
      Effect.gen(function* () {
        const secret = Option.match(o.clientSecret, { onNone: () => DEFAULT_SECRET, onSome: Redacted.value })
        const emulator = yield* Emulator.make({
          port: o.port,
          admin: o.admin,
          approval: { mode: o.autoApprove ? "auto" : "manual" },
          limits: {
            ...Option.match(o.maxPoints, { onNone: () => ({}), onSome: (maxPoints) => ({ maxPoints }) }),
            ...Option.match(o.restoreRate, { onNone: () => ({}), onSome: (restoreRate) => ({ restoreRate }) })
          }
        })
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
          `  admin API: ${o.admin ? `POST ${emulator.baseUrl}/__admin (the RPC protocol of AdminRpcs)` : "off (start with --admin)"}`,
          ...created.map((a, i) => `  account ${i + 1}: id ${a.accountId}  name "${a.name}"  admin user ${a.adminUserId}  jobs ${o.jobs}`)
        ]
        yield* Console.log(lines.join("\n"))
        yield* Effect.logInfo("emulator ready").pipe(Effect.annotateLogs({ baseUrl: emulator.baseUrl }))
        return yield* Effect.never
      })
    )
).pipe(Command.withDescription("Run the service emulator (OAuth, GraphQL, webhooks) until interrupted"))

import { Command, Options } from "@effect/cli"
import { Config, Effect } from "effect"
import { ExitCodes, ExitWith } from "../cli/ExitCode.js"
import { withHelp, withShownDefault } from "../cli/help.js"
import { checkAtLeast } from "../cli/optionChecks.js"

const dataDir = Options.text("data-dir").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Where the embedded Postgres keeps the demo's data (ignored when DATABASE_URL is set)"),
  withShownDefault("./.data/demo")
)
const jobs = Options.integer("jobs").pipe(Options.withPseudoName("N"), Options.withDescription("Jobs per emulated account (its other collections scale with it)"), withShownDefault(500))

export const demoCommand = withHelp(Command.make("demo", { dataDir, jobs }, (options) =>
  Effect.gen(function* () {
    const bad = checkAtLeast("--jobs", options.jobs, 1)
    if (bad !== undefined) return yield* bad
    const databaseUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
    // loaded by this command only (the emulator and the demo's steps)
    const { runDemo } = yield* Effect.promise(() => import("./Demo.js"))
    const result = yield* runDemo({
      dataDir: options.dataDir,
      databaseUrl,
      // never the production schema: the demo starts its own from scratch
      schema: "account_sync_demo",
      jobsPerAccount: options.jobs
    })
    if (!result.accounts.every((a) => a.matches)) {
      return yield* new ExitWith({ code: ExitCodes.failure, message: "demo: the warehouse does not match the service (see above)" })
    }
  })
), {
  purpose: "Run the whole job on embedded defaults: nothing to set up, about a minute.",
  details:
    "Starts the emulator and an embedded Postgres, connects two accounts through the OAuth flow, backfills every stream, edits and deletes records in the service and syncs again, disconnects one account, and checks column by column that the warehouse holds what the service holds. With DATABASE_URL set it writes to the schema account_sync_demo of that database (dropped and recreated).",
  examples: ["npm run demo", "account-sync demo --jobs 2000 --data-dir /tmp/demo"]
})

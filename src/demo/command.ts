import { Command, Options } from "@effect/cli"
import { Config, Effect } from "effect"
import { ExitCodes, ExitWith } from "../cli/ExitCode.js"
import { runDemo } from "./Demo.js"

const dataDir = Options.text("data-dir").pipe(
  Options.withDefault("./.data/demo"),
  Options.withDescription("Where the embedded Postgres keeps the demo's data (ignored when DATABASE_URL is set).")
)
const jobs = Options.integer("jobs").pipe(Options.withDefault(500), Options.withDescription("Jobs per emulated account (its other collections scale with it)."))

export const demoCommand = Command.make("demo", { dataDir, jobs }, (options) =>
  Effect.gen(function* () {
    const databaseUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
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
).pipe(
  Command.withDescription(
    "Run the whole job against an emulated service on embedded defaults: connect two accounts (OAuth), backfill, incremental sync, a disconnect, status."
  )
)

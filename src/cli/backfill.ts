import { Command, Options } from "@effect/cli"
import { withMetricsFile } from "../observability/prometheus.js"
import { Effect } from "effect"
import { SyncAppLive } from "../sync/SyncLive.js"
import { SyncRunner } from "../sync/SyncRunner.js"
import { reportAndExit } from "../sync/summary.js"

const accounts = Options.text("account").pipe(Options.repeated, Options.withDescription("Only this account (repeatable)."))
const restart = Options.boolean("restart").pipe(Options.withDescription("Forget the checkpoint and start the full pass over."))

/** `backfill`: a full pass of every stream, resuming from its checkpoint after any interruption. */
export const backfillCommand = Command.make("backfill", { accounts, restart }, (args) =>
  Effect.gen(function* () {
    const runner = yield* SyncRunner
    const reports = yield* runner.run({ mode: "backfill", accounts: args.accounts, restart: args.restart })
    yield* reportAndExit(reports)
  }).pipe(Effect.provide(SyncAppLive), withMetricsFile)
).pipe(
  Command.withDescription(
    "Full pass of every stream for every active connection, resuming from the checkpoint; --restart starts over. Rows gone from the service are marked deleted at the end."
  )
)

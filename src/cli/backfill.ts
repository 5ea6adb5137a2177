import { Command, Options } from "@effect/cli"
import { runAndReport, runOptions } from "./runOptions.js"

const restart = Options.boolean("restart").pipe(Options.withDescription("Forget the checkpoint and start the full pass over."))

/** `backfill`: a full pass of every stream, resuming from its checkpoint after any interruption. */
export const backfillCommand = Command.make("backfill", { ...runOptions, restart }, ({ restart, ...args }) =>
  runAndReport("backfill", args, { restart })
).pipe(
  Command.withDescription(
    "Full pass of every stream for every active connection, resuming from the checkpoint; --restart starts over. Rows gone from the service are marked deleted at the end."
  )
)

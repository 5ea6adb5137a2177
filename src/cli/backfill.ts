import { Command, Options } from "@effect/cli"
import { withHelp } from "./help.js"
import { runAndReport, runOptions } from "./runOptions.js"

const restart = Options.boolean("restart").pipe(Options.withDescription("Forget the checkpoint and start the full pass over"))

/** `backfill`: a full pass of every stream, resuming from its checkpoint after any interruption. */
export const backfillCommand = withHelp(
  Command.make("backfill", { ...runOptions, restart }, ({ restart, ...args }) => runAndReport("backfill", args, { restart })),
  {
    purpose: "Land every row of every stream: a full pass for every active connection.",
    details:
      "A pass interrupted anywhere resumes from its checkpoint at the next run; --restart starts it over. Rows gone from the service are marked deleted (deleted_at) when the pass ends. On a terminal a live display shows each account's stream, rows of the service's count and the time left.",
    examples: ["account-sync backfill", "account-sync backfill --stream users --account Z2lkOi8vc2VydmljZS9BY2NvdW50LzEwMDE= --restart"]
  }
)

import { Command } from "@effect/cli"
import { runAndReport, runOptions } from "./runOptions.js"

/** `sync`: one run for every active connection (the cron entry point): incremental, or full when one is due. */
export const syncCommand = Command.make("sync", runOptions, (args) => runAndReport("sync", args)).pipe(
  Command.withDescription(
    "Sync every active connection: an incremental pass per stream, or a full pass when one is due or in progress. Exit 0 all synced, 3 some accounts need reconnecting, 1 a failure."
  )
)

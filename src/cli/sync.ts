import { Command } from "@effect/cli"
import { Effect } from "effect"
import { ExitWith } from "./ExitCode.js"

// Placeholder until its issue lands: says so instead of pretending to work.
export const syncCommand = Command.make("sync", {}, () =>
  Effect.fail(new ExitWith({ code: 1, message: "account-sync sync: not implemented yet" }))
).pipe(Command.withDescription("(not implemented yet)"))

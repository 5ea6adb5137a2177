import { Command } from "@effect/cli"
import { Effect } from "effect"
import { ExitWith } from "./ExitCode.js"

// Placeholder until its issue lands: says so instead of pretending to work.
export const disconnectCommand = Command.make("disconnect", {}, () =>
  Effect.fail(new ExitWith({ code: 1, message: "account-sync disconnect: not implemented yet" }))
).pipe(Command.withDescription("(not implemented yet)"))

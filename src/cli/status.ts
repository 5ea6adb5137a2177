import { Command } from "@effect/cli"
import { Effect } from "effect"
import { ExitWith } from "./ExitCode.js"

// Placeholder until its issue lands: says so instead of pretending to work.
export const statusCommand = Command.make("status", {}, () =>
  Effect.fail(new ExitWith({ code: 1, message: "account-sync status: not implemented yet" }))
).pipe(Command.withDescription("(not implemented yet)"))

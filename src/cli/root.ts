import { Command } from "@effect/cli"
import { backfillCommand } from "./backfill.js"
import { connectCommand } from "./connect.js"
import { demoCommand } from "./demo.js"
import { disconnectCommand } from "./disconnect.js"
import { emulatorCommand } from "./emulator.js"
import { migrateCommand } from "./migrate.js"
import { queryCommand } from "./query.js"
import { serveCommand } from "./serve.js"
import { statusCommand } from "./status.js"
import { syncCommand } from "./sync.js"

/** The subcommands by name (the README test checks every invocation it shows against them). */
export const commands = {
  connect: connectCommand,
  serve: serveCommand,
  sync: syncCommand,
  backfill: backfillCommand,
  status: statusCommand,
  disconnect: disconnectCommand,
  migrate: migrateCommand,
  query: queryCommand,
  emulator: emulatorCommand,
  demo: demoCommand
} as const

/** Every command of the program, as one `account-sync` command. */
export const root = Command.make("account-sync").pipe(
  Command.withDescription("Sync OAuth-connected service accounts into Postgres."),
  Command.withSubcommands(Object.values(commands) as [typeof connectCommand, ...Array<typeof connectCommand>])
)

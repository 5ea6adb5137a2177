import { Command } from "@effect/cli"
import { backfillCommand } from "./backfill.js"
import { connectCommand } from "./connect.js"
import { disconnectCommand } from "./disconnect.js"
import { doctorCommand } from "./doctor.js"
import { emulatorCommand } from "./emulator.js"
import { grantReaderCommand } from "./grantReader.js"
import { migrateCommand } from "./migrate.js"
import { queryCommand } from "./query.js"
import { schemaCommand } from "./schema.js"
import { serveCommand } from "./serve.js"
import { statusCommand } from "./status.js"
import { syncCommand } from "./sync.js"
import { webhooksCommand } from "./webhooks.js"
import { workerCommand } from "./worker.js"

/** The subcommands by name (the README test checks every invocation it shows against them). */
export const commands = {
  connect: connectCommand,
  serve: serveCommand,
  sync: syncCommand,
  backfill: backfillCommand,
  worker: workerCommand,
  status: statusCommand,
  disconnect: disconnectCommand,
  migrate: migrateCommand,
  query: queryCommand,
  "grant-reader": grantReaderCommand,
  webhooks: webhooksCommand,
  schema: schemaCommand,
  emulator: emulatorCommand,
  doctor: doctorCommand
} as const

/**
 * Every command of the program, as one `account-sync` command: the commands above plus `extra` (main adds the
 * demo, which sits above the CLI: it runs the application the CLI assembles).
 */
export const makeRoot = (extra: Readonly<Record<string, Command.Command<any, any, any, any>>>) =>
  Command.make("account-sync").pipe(
    Command.withDescription("Sync OAuth-connected service accounts into Postgres."),
    Command.withSubcommands([...Object.values(commands), ...Object.values(extra)] as [typeof connectCommand, ...Array<typeof connectCommand>])
  )

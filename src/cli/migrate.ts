import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { DatabaseLive } from "../db/Database.js"
import { runMigrations } from "../db/Migrations.js"

export const migrateCommand = Command.make("migrate", {}, () =>
  runMigrations.pipe(
    Effect.flatMap((applied) =>
      Console.log(applied.length === 0 ? "schema is up to date" : `applied ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
    ),
    Effect.provide(DatabaseLive)
  )
).pipe(Command.withDescription("Apply pending database migrations (sql/NNN_*.sql) and exit."))

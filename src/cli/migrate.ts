import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { DatabaseLive } from "../db/Database.js"
import { runMigrations } from "../db/Migrations.js"
import { withHelp } from "./help.js"

export const migrateCommand = withHelp(Command.make("migrate", {}, () =>
  runMigrations.pipe(
    Effect.flatMap((applied) =>
      Console.log(applied.length === 0 ? "schema is up to date" : `applied ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
    ),
    Effect.provide(DatabaseLive)
  )
), {
  purpose: "Apply the pending database migrations (sql/NNN_*.sql) and exit; needs only the database.",
  details: "Every command that needs the schema runs them first; this is for deployments that migrate on their own step.",
  examples: ["account-sync migrate"]
})

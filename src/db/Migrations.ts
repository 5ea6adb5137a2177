import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql"
import { Effect, Schedule } from "effect"
import { ensureRowSecurity } from "./rowSecurity.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** `sql/` at the project root: numbered plain SQL files, `NNN_name.sql`. */
export const migrationsDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../sql")

const fileName = /^(\d+)_([\w-]+)\.sql$/

/** Loads `sql/NNN_name.sql` files in id order; each runs once, in one transaction with its record. */
export const sqlFileLoader = (directory: string = migrationsDirectory): Migrator.Loader =>
  Effect.try({
    try: () =>
      fs
        .readdirSync(directory)
        .flatMap((file) => {
          const match = fileName.exec(file)
          if (!match) return []
          const text = fs.readFileSync(path.join(directory, file), "utf8")
          const load = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text).raw)
          return [[Number(match[1]), match[2]!, Effect.succeed(load)] as const]
        })
        .sort(([a], [b]) => a - b),
    catch: (cause) =>
      new Migrator.MigrationError({ reason: "bad-state", message: `cannot read migrations from ${directory}: ${cause}` })
  })

const migrate = Migrator.make({})

/**
 * Applies every pending migration of `directory` (concurrent callers wait on the migrations table lock), then keeps
 * every table with accounts' rows under row-level security (a new stream's tables included) and the OAuth state its
 * owner's alone.
 */
export const runMigrationsFrom = (directory: string) =>
  migrate({ loader: sqlFileLoader(directory), table: "schema_migrations" }).pipe(
    // two processes starting at once can race on creating the migrations table itself: one retry settles it
    Effect.retry({ times: 2, schedule: Schedule.exponential("100 millis").pipe(Schedule.jittered) }),
    Effect.tap((applied) =>
      applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`) : Effect.void
    ),
    Effect.tap(() => ensureRowSecurity)
  )

/** The migrations the program ships (`sql/`). */
export const runMigrations = runMigrationsFrom(migrationsDirectory)

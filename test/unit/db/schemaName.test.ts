import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { DatabaseConfig, formatConfigError } from "../../../src/config.js"

const schemaOf = (DB_SCHEMA: string) =>
  Effect.exit(Effect.map(DatabaseConfig, (config) => config.schema).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DB_SCHEMA", DB_SCHEMA]])))))

const failureLine = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a configuration failure")
  return formatConfigError(exit.cause.error as never)
}

describe("DB_SCHEMA at configuration load", () => {
  it.effect("a reserved word is refused with one line that says so", () =>
    Effect.gen(function* () {
      for (const word of ["select", "user", "table", "order", "left", "join", "int", "values"]) {
        const line = failureLine(yield* schemaOf(word))
        expect(line).toBe(`DB_SCHEMA is invalid (in .env or the environment): "${word}" is a reserved word in Postgres; choose another schema name (e.g. account_sync)`)
      }
    })
  )

  it.effect("a system schema is refused with one line that says so", () =>
    Effect.gen(function* () {
      for (const schema of ["pg_catalog", "pg_toast", "pg_temp", "pg_anything", "information_schema"]) {
        const line = failureLine(yield* schemaOf(schema))
        expect(line).toBe(`DB_SCHEMA is invalid (in .env or the environment): "${schema}" is a system schema of Postgres; choose a schema of your own (e.g. account_sync)`)
      }
    })
  )

  it.effect("plain names, public and unreserved keywords are accepted; a non-identifier still says what is expected", () =>
    Effect.gen(function* () {
      for (const schema of ["account_sync", "public", "warehouse_2", "_private", "jobs", "data", "begin"]) {
        expect(yield* schemaOf(schema)).toEqual(Exit.succeed(schema))
      }
      expect(failureLine(yield* schemaOf("Bad-Name"))).toMatch(/^DB_SCHEMA is invalid \(in \.env or the environment\): expected a Postgres identifier/)
    })
  )
})

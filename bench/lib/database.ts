import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { makeDatabaseLayer } from "../../src/db/Database.js"
import { runMigrations } from "../../src/db/Migrations.js"
import { dropSchemaAndQueryRole } from "../../src/db/queryRole.js"

/** The Postgres the benchmarks use: `DATABASE_URL`, else `TEST_DATABASE_URL`, else the local test database. */
export const benchDatabaseUrl = (): string =>
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const freshSchemaName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${crypto.randomBytes(3).toString("hex")}`

/**
 * A client on a fresh, migrated schema that is dropped when the layer is released. The bench's own pool is
 * named `account-sync-bench`, so chaos's pg_terminate_backend (aimed at `account-sync`) never hits it.
 */
export const freshSchemaLayer = (schema: string, options: { readonly maxConnections?: number; readonly keep?: boolean } = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* runMigrations
      if (!options.keep) yield* Effect.addFinalizer(() => dropSchemaAndQueryRole(schema).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
    })
  ).pipe(
    Layer.provideMerge(
      makeDatabaseLayer({
        url: Option.some(Redacted.make(benchDatabaseUrl())),
        dataDir: "memory",
        schema,
        maxConnections: options.maxConnections ?? 10,
        applicationName: "account-sync-bench"
      })
    )
  )

export type BenchDatabase = SqlClient.SqlClient | PgClient.PgClient

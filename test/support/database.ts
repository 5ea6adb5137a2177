import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { makeDatabaseLayer } from "../../src/db/Database.js"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.js"
import { runMigrations } from "../../src/db/Migrations.js"

/** Where a test file's own fresh schema lives, and the environment a child process needs to reach it. */
export class TestDatabase extends Context.Tag("test/TestDatabase")<
  TestDatabase,
  { readonly url: string; readonly schema: string; readonly env: Record<string, string> }
>() {}

/**
 * No real Postgres for this run (see globalSetup.ts): each file has an embedded one, whose connections share one
 * session. What needs sessions of its own (row and advisory locks between processes, terminating a backend,
 * statements overlapping on two connections) cannot be shown there.
 */
export const embeddedTestDatabase = (): boolean => process.env.TEST_DATABASE_URL === undefined

const freshSchemaName = () => `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`

/**
 * A fresh, migrated schema on `TEST_DATABASE_URL` (dropped at the end), or an in-memory embedded Postgres
 * when that is unset, so the suite also passes on a machine without Postgres.
 */
export const TestDatabaseLive: Layer.Layer<TestDatabase | PgClient.PgClient | SqlClient.SqlClient, unknown> =
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const schema = freshSchemaName()
      const configured = process.env.TEST_DATABASE_URL
      const url =
        configured ??
        (yield* Effect.map(
          startEmbeddedPostgres({ dataDir: "memory", searchPath: schema }),
          (pg) => `postgres://postgres@127.0.0.1:${pg.port}/postgres`
        ))
      // the embedded database's connections share one session: no named statements there (children included)
      const env: Record<string, string> = { DATABASE_URL: url, DB_SCHEMA: schema, ...(configured ? {} : { DATABASE_PREPARED_STATEMENTS: "false" }) }
      const info = Layer.succeed(TestDatabase, { url, schema, env })
      const client = makeDatabaseLayer({
        url: Option.some(Redacted.make(url)),
        dataDir: "memory",
        schema,
        maxConnections: 12,
        prepareStatements: configured !== undefined
      })
      const lifecycle = Layer.scopedDiscard(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* runMigrations
          if (configured) {
            yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
          }
        })
      )
      return Layer.mergeAll(info, lifecycle.pipe(Layer.provideMerge(client)))
    })
  )

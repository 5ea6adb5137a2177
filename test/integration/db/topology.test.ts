import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { DatabaseTopology, makeDatabaseLayer } from "../../../src/db/Database.js"
import { startEmbeddedPostgres } from "../../../src/db/EmbeddedPostgres.js"
import { PreparedStatements } from "../../../src/db/preparedStatements.js"
import { dropSchema, freshSchemaName } from "../../support/database.js"

// the schema the layer makes on a real Postgres is dropped with the test's scope
const topologyOf = (url: Option.Option<string>, schema = freshSchemaName()) =>
  Effect.gen(function* () {
    if (Option.isSome(url) && url.value === process.env.TEST_DATABASE_URL) yield* Effect.addFinalizer(() => dropSchema(url.value, schema))
    const context = yield* Layer.build(makeDatabaseLayer({ url: Option.map(url, Redacted.make), dataDir: "memory", schema }))
    return { singleSession: Effect.runSync(Effect.provide(DatabaseTopology, context)).singleSession, prepares: Effect.runSync(Effect.provide(PreparedStatements, context)).enabled }
  })

// The database says what it is: whether it was started here or reached through a URL (a child process of a test)
it.scoped("the embedded Postgres is one session, started here or reached through a URL; nothing is kept prepared there", () =>
  Effect.gen(function* () {
    expect(yield* topologyOf(Option.none())).toEqual({ singleSession: true, prepares: false })
    // (an embedded database serves the one schema it was started with: its session's search_path)
    const embedded = yield* startEmbeddedPostgres({ dataDir: "memory", searchPath: "account_sync" })
    expect(yield* topologyOf(Option.some(embedded.url), "account_sync")).toEqual({ singleSession: true, prepares: false })
  })
)

it.scoped.skipIf(process.env.TEST_DATABASE_URL === undefined)("a real Postgres has sessions of its own; page statements are kept prepared", () =>
  Effect.gen(function* () {
    expect(yield* topologyOf(Option.some(process.env.TEST_DATABASE_URL!))).toEqual({ singleSession: false, prepares: true })
  })
)

// A page statement is estimated costly (jsonb_array_elements is guessed at 100 rows a parent): with JIT on, Postgres
// compiled the whole-account page statements on every page, 1-3 s each once the tables had a few thousand rows
it.scoped.skipIf(process.env.TEST_DATABASE_URL === undefined)("the program's sessions run without JIT compilation", () =>
  Effect.gen(function* () {
    const schema = freshSchemaName()
    yield* Effect.addFinalizer(() => dropSchema(process.env.TEST_DATABASE_URL!, schema))
    const context = yield* Layer.build(makeDatabaseLayer({ url: Option.some(Redacted.make(process.env.TEST_DATABASE_URL!)), dataDir: "memory", schema }))
    const sql = Effect.runSync(Effect.provide(SqlClient.SqlClient, context))
    for (let i = 0; i < 3; i++) {
      const [row] = yield* sql<{ jit: string }>`SHOW jit`
      expect(row!.jit).toBe("off")
    }
  })
)

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { runDemo } from "../../../src/demo/Demo.js"
import { dropSchemaAndQueryRole } from "../../../src/db/queryRole.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseLive } from "../../support/database.js"

layer(TestDatabaseLive, { timeout: 300_000, excludeTestServices: true })("demo", (it) => {
  // with DATABASE_URL: a second pool with its own schema, which the embedded database's one session cannot give
  it.effect.skipIf(embeddedTestDatabase())(
    "runs the whole job and leaves a warehouse equal to the service, one account disconnected",
    () =>
      Effect.gen(function* () {
        const db = yield* TestDatabase
        const schema = `${db.schema}_demo`
        const result = yield* runDemo({
          dataDir: "memory",
          databaseUrl: Option.some(Redacted.make(db.url)),
          schema,
          jobsPerAccount: 400
        })
        expect(result.accounts).toHaveLength(2)
        for (const account of result.accounts) expect(account.matches, account.name).toBe(true)
        expect(result.accounts.map((a) => a.status).sort()).toEqual(["active", "disconnected"])

        const sql = yield* SqlClient.SqlClient
        const counts = yield* sql<{ account_id: string; live: string; deleted: string; dupes: string }>`
          SELECT account_id,
                 count(*) FILTER (WHERE deleted_at IS NULL) AS live,
                 count(*) FILTER (WHERE deleted_at IS NOT NULL) AS deleted,
                 count(*) - count(DISTINCT id) AS dupes
          FROM ${sql(schema)}.jobs GROUP BY account_id ORDER BY account_id`
        expect(counts).toHaveLength(2)
        // the first account had 15 jobs deleted in the service and a full pass afterwards
        expect(counts.map((c) => Number(c.deleted)).sort()).toEqual([0, 15])
        expect(counts.every((c) => Number(c.dupes) === 0)).toBe(true)
        const runs = yield* sql<{ outcome: string }>`SELECT outcome FROM ${sql(schema)}.sync_runs`
        expect(runs.length).toBeGreaterThanOrEqual(5)
        expect(runs.every((r) => r.outcome === "succeeded")).toBe(true)
        yield* dropSchemaAndQueryRole(schema)
      }),
    300_000
  )
})

import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { makeDatabaseLayer } from "../../../src/db/Database.js"
import { runMigrations } from "../../../src/db/Migrations.js"
import { dropSchemaAndQueryRole } from "../../../src/db/queryRole.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { Checkpoints, CheckpointsLive } from "../../../src/sync/pass/Checkpoints.js"
import { Warehouse, WarehouseLive } from "../../../src/sync/landing/Warehouse.js"
import { job, landed, rowsRead } from "../../support/jobFixtures.js"

const url = process.env.TEST_DATABASE_URL

/** A Warehouse over one connection (so every statement shares one session) on a fresh schema, dropped after. */
const oneSession = (prepareStatements: boolean) => {
  const schema = `t_prep_${crypto.randomBytes(4).toString("hex")}`
  const database = makeDatabaseLayer({ url: Option.some(Redacted.make(url!)), dataDir: "memory", schema, maxConnections: 1, prepareStatements })
  const migrated = Layer.scopedDiscard(
    Effect.zipRight(
      runMigrations,
      Effect.addFinalizer(() => dropSchemaAndQueryRole(schema))
    )
  )
  return WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(migrated), Layer.provideMerge(database))
}

const landThreePages = Effect.gen(function* () {
  const warehouse = yield* Warehouse
  const sql = yield* SqlClient.SqlClient
  yield* (yield* Checkpoints).begin("acc-prep", jobsStream, "full")
  for (const n of [1, 2, 3]) {
    const nodes = landed([job(n)])
    yield* warehouse.land({
      accountId: "acc-prep",
      stream: jobsStream,
      pages: rowsRead(nodes),
      pass: { kind: "full", partition: 0, position: n, anchors: [job(n).id], shifted: false, highWaterMark: null }
    })
  }
  const landedRows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = 'acc-prep'`
  const prepared = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%jsonb_to_record%'`
  return { rows: landedRows[0]!.n, prepared: prepared[0]!.n }
})

// the embedded database shares one session among connections: prepared statements are off there, nothing to test
describe.skipIf(url === undefined)("prepared page statement", () => {
  it.effect("the page statement is prepared once on a connection and used for every page", () =>
    Effect.gen(function* () {
      expect(yield* landThreePages).toEqual({ rows: 3, prepared: 1 })
    }).pipe(Effect.provide(oneSession(true)))
  )

  it.effect("with prepared statements off (DATABASE_PREPARED_STATEMENTS=false) nothing is prepared, pages land the same", () =>
    Effect.gen(function* () {
      expect(yield* landThreePages).toEqual({ rows: 3, prepared: 0 })
    }).pipe(Effect.provide(oneSession(false)))
  )
})

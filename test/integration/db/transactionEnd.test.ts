import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { transactionEndFailures } from "../../../src/db/transactionEnd.js"
import { TestDatabaseLive } from "../../support/database.js"

// the session terminated under the transaction: its statement fails, and so does the ROLLBACK on the dead session
const terminatedUnderTransaction = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(sql`SELECT pg_terminate_backend(pg_backend_pid())`)
})

layer(TestDatabaseLive, { timeout: 60_000 })("a transaction whose session is terminated", (it) => {
  it.effect("@effect/sql makes the failed ROLLBACK a defect; transactionEndFailures makes it a SqlError again", () =>
    Effect.gen(function* () {
      const raw = yield* Effect.exit(terminatedUnderTransaction)
      expect(Exit.isFailure(raw) && Cause.isDie(raw.cause)).toBe(true)

      const mended = yield* Effect.exit(transactionEndFailures(terminatedUnderTransaction))
      expect(Exit.isFailure(mended) && Cause.isDie(mended.cause)).toBe(false)
      const failure = Exit.isFailure(mended) ? Cause.failureOption(mended.cause) : undefined
      expect(failure?._tag === "Some" && (failure.value as { _tag?: string })._tag).toBe("SqlError")

      // the pool gives a live session afterwards
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 AS one`).toEqual([{ one: 1 }])
    })
  )
})

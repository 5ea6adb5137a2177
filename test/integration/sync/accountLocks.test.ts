import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { AccountLocks, AccountLocksLive } from "../../../src/sync/AccountLocks.js"
import { embeddedTestDatabase, TestDatabaseLive } from "../../support/database.js"

const TestLayer = AccountLocksLive.pipe(Layer.provideMerge(TestDatabaseLive))

/** Advisory locks of this schema's accounts granted now, on any session. */
const held = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = hashtext('account-sync:' || current_schema())::oid`,
    (rows) => rows[0]!.n
  )
)

layer(TestLayer, { timeout: 60_000 })("account locks on the one lock session", (it) => {
  // the embedded database's locks exclude nothing (one session): nothing to count there
  it.effect.skipIf(embeddedTestDatabase())("400 accounts locked at once are all held, each once, and all released with their scopes", () =>
    Effect.gen(function* () {
      const locks = yield* AccountLocks
      const accounts = Array.from({ length: 400 }, (_, i) => `acc-many-${i}`)
      const allHeld = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      let locked = 0
      const holders = yield* Effect.forEach(
        accounts,
        (accountId) =>
          Effect.scoped(
            Effect.gen(function* () {
              const got = yield* locks.lock(accountId)
              if (got && ++locked === accounts.length) yield* Deferred.succeed(allHeld, undefined)
              yield* Deferred.await(release)
              return got
            })
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.fork)
      yield* Deferred.await(allHeld)
      expect(yield* held).toBe(accounts.length)
      yield* Deferred.succeed(release, undefined)
      const results = yield* holders.await.pipe(Effect.flatten)
      expect(results.every((got) => got)).toBe(true)
      expect(yield* held).toBe(0)
    })
  )
})

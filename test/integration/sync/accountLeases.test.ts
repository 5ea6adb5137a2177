import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Option } from "effect"
import crypto from "node:crypto"
import { recordOutcomeStatement } from "../../../src/run/AccountHealth.js"
import { AccountLeases, AccountLeasesLive, leasedTransaction } from "../../../src/sync/AccountLeases.js"
import { withEnv } from "../../support/config.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseLive, testDatabaseUrlAs, withPgClient } from "../../support/database.js"

const TestLayer = AccountLeasesLive.pipe(Layer.provideMerge(TestDatabaseLive))

/**
 * Another process's leases: a layer of its own (its own session and instance), built fresh for each use; with leases
 * of `seconds` (3: renewed every second, a lapse is seen within a test; 600: no renewal within a test, so a lapse made
 * by hand stays).
 */
const otherProcess = <A, E, R>(use: (other: typeof AccountLeases.Service) => Effect.Effect<A, E, R>, seconds = "3") =>
  Effect.scoped(Effect.flatMap(AccountLeases, use)).pipe(
    Effect.provide(Layer.fresh(AccountLeasesLive.pipe(Layer.provide(withEnv({ ACCOUNT_LEASE_SECONDS: seconds })))))
  )

const leaseOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ epoch: string; holder: string; live: boolean }>`SELECT epoch::text, holder, expires_at > now() AS live FROM account_leases WHERE account_id = ${accountId}`,
      (rows) => rows[0]
    )
  )

layer(TestLayer, { timeout: 60_000, excludeTestServices: true })("account leases", (it) => {
  it.effect("400 accounts leased at once are all held, each once, and all released with their scopes", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const leasesOf = yield* AccountLeases
      const accounts = Array.from({ length: 400 }, (_, i) => `acc-many-${i}`)
      const allHeld = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      let taken = 0
      const holders = yield* Effect.forEach(
        accounts,
        (accountId) =>
          Effect.scoped(
            Effect.gen(function* () {
              const elsewhere = yield* leasesOf.acquire(accountId)
              if (Option.isNone(elsewhere) && ++taken === accounts.length) yield* Deferred.succeed(allHeld, undefined)
              yield* Deferred.await(release)
              return Option.isNone(elsewhere)
            })
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.fork)
      yield* Deferred.await(allHeld)
      const live = sql<{ n: number }>`SELECT count(*)::int AS n FROM account_leases WHERE account_id LIKE 'acc-many-%' AND expires_at > now()`
      expect((yield* live)[0]!.n).toBe(accounts.length)
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(holders)).every((got) => got)).toBe(true)
      expect((yield* live)[0]!.n).toBe(0)
    })
  )

  it.effect("a second run of an account this process holds is refused, naming this process; after release it is taken with the next epoch", () =>
    Effect.gen(function* () {
      const leasesOf = yield* AccountLeases
      yield* Effect.scoped(
        Effect.gen(function* () {
          expect(yield* leasesOf.acquire("acc-twice")).toEqual(Option.none())
          const second = yield* Effect.scoped(leasesOf.acquire("acc-twice"))
          expect(Option.map(second, (h) => h.thisProcess)).toEqual(Option.some(true))
          expect(Option.getOrThrow(second).holder).toMatch(/\(pid \d+\)$/)
        })
      )
      const first = yield* leaseOf("acc-twice")
      expect(first!.live).toBe(false)
      yield* Effect.scoped(leasesOf.acquire("acc-twice"))
      expect(Number((yield* leaseOf("acc-twice"))!.epoch)).toBe(Number(first!.epoch) + 1)
    })
  )

  it.effect("a run's taking closes the runs left running under earlier epochs in its statement after a release (which writes the run's outcome with it); after a lapse it leaves them to the caller", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const leasesOf = yield* AccountLeases
      const leftRunning = (accountId: string) =>
        sql`INSERT INTO sync_runs (account_id, stream, kind, lease_epoch)
          SELECT account_id, 'jobs', 'incremental', epoch FROM account_leases WHERE account_id = ${accountId} RETURNING id`
      const outcomes = (accountId: string) =>
        Effect.map(sql<{ outcome: string }>`SELECT outcome FROM sync_runs WHERE account_id = ${accountId} ORDER BY id`, (rows) => rows.map((r) => r.outcome))
      // released: the run left running under the earlier epoch is closed by the next taking
      // the outcome written by the release's statement, with it
      yield* Effect.scoped(
        Effect.flatMap(leasesOf.acquireForRun("acc-runs"), (taken) =>
          Effect.zipRight(
            leftRunning("acc-runs"),
            Either.isRight(taken) ? taken.right.onRelease({ statement: recordOutcomeStatement, params: ["failed", "boom"] }) : Effect.die("not taken")
          )
        )
      )
      const health = yield* sql<{ last_error: string; live: boolean }>`
        SELECT h.last_error, l.expires_at > now() AS live FROM account_health h JOIN account_leases l USING (account_id) WHERE account_id = 'acc-runs'`
      expect(health).toEqual([{ last_error: "boom", live: false }])
      const released = yield* Effect.scoped(Effect.tap(leasesOf.acquireForRun("acc-runs"), () => leftRunning("acc-runs")))
      expect(Either.map(released, (t) => t.abandoned)).toEqual(Either.right(1))
      expect(yield* outcomes("acc-runs")).toEqual(["interrupted", "running"])
      // lapsed, not released (its holder hung or died): the taking closes nothing, the caller does
      yield* sql`UPDATE account_leases SET expires_at = now() - interval '1 second' WHERE account_id = 'acc-runs'`
      yield* Effect.scoped(
        Effect.gen(function* () {
          expect(Either.map(yield* leasesOf.acquireForRun("acc-runs"), (t) => t.abandoned)).toEqual(Either.right(undefined))
          expect(yield* outcomes("acc-runs")).toEqual(["interrupted", "running"])
          // held: a second taking is refused and closes nothing
          const refused = yield* Effect.scoped(leasesOf.acquireForRun("acc-runs"))
          expect(Either.isLeft(refused) && refused.left.thisProcess).toBe(true)
          expect(yield* outcomes("acc-runs")).toEqual(["interrupted", "running"])
        })
      )
    })
  )

  it.effect.skipIf(embeddedTestDatabase())("another process's lease is refused while in force, taken once it lapsed, and at once when its session ended", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const mine = yield* AccountLeases
      // held by another process that goes on renewing: refused, naming it
      yield* otherProcess((other) =>
        Effect.gen(function* () {
          expect(yield* other.acquire("acc-other")).toEqual(Option.none())
          yield* Effect.sleep("3500 millis")
          const refused = yield* Effect.scoped(mine.acquire("acc-other"))
          expect(Option.map(refused, (h) => h.thisProcess)).toEqual(Option.some(false))
        })
      )
      // a lapsed lease (its holder stopped renewing: here its expiry moved back by hand) is taken with the next epoch
      yield* Effect.scoped(mine.acquire("acc-lapsed"))
      yield* sql`UPDATE account_leases SET expires_at = now() + interval '1 hour' WHERE account_id = 'acc-lapsed'`
      expect(Option.isSome(yield* otherProcess((other) => other.acquire("acc-lapsed")))).toBe(true)
      yield* sql`UPDATE account_leases SET expires_at = now() - interval '1 second' WHERE account_id = 'acc-lapsed'`
      expect(yield* otherProcess((other) => other.acquire("acc-lapsed"))).toEqual(Option.none())
      // in force for an hour, but the session renewing it is gone (its process died): taken at once
      yield* otherProcess(
        (other) =>
        Effect.gen(function* () {
          expect(yield* other.acquire("acc-dead")).toEqual(Option.none())
          yield* sql`UPDATE account_leases SET expires_at = now() + interval '1 hour' WHERE account_id = 'acc-dead'`
          const before = yield* leaseOf("acc-dead")
          yield* sql`SELECT pg_terminate_backend(holder_pid) FROM account_leases WHERE account_id = 'acc-dead'`
          yield* Effect.sleep("200 millis")
          expect(yield* Effect.scoped(mine.acquire("acc-dead"))).toEqual(Option.none())
          expect(Number((yield* leaseOf("acc-dead"))!.epoch)).toBe(Number(before!.epoch) + 1)
        }),
        "600"
      )
    })
  )

  it.effect.skipIf(embeddedTestDatabase())("a write under an epoch that moved writes nothing; a new holder's bump waits for a write in flight", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE fenced_writes (n int)`
      const write = (n: number, before: Effect.Effect<void> = Effect.void) =>
        leasedTransaction(sql, "acc-fenced", "jobs", Effect.zipRight(before, sql`INSERT INTO fenced_writes VALUES (${n})`))
      const written = Effect.map(sql<{ n: number }>`SELECT n FROM fenced_writes ORDER BY n`, (rows) => rows.map((r) => r.n))
      const outcome = yield* otherProcess(
        (first) =>
          Effect.gen(function* () {
            expect(yield* first.acquire("acc-fenced")).toEqual(Option.none())
            yield* write(1)
            // a write in flight (its transaction checked the lease) while the lease lapses and a second process takes it
            const checked = yield* Deferred.make<void>()
            const go = yield* Deferred.make<void>()
            const inFlight = yield* Effect.fork(write(2, Effect.zipRight(Deferred.succeed(checked, undefined), Deferred.await(go))))
            yield* Deferred.await(checked)
            yield* sql`UPDATE account_leases SET expires_at = now() - interval '1 second' WHERE account_id = 'acc-fenced'`
            const second = yield* Effect.fork(otherProcess((other) => other.acquire("acc-fenced"), "600"))
            yield* Effect.sleep("500 millis")
            // the bump waits for the write that checked the old epoch
            expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
            yield* Deferred.succeed(go, undefined)
            yield* Fiber.join(inFlight)
            expect(yield* Fiber.join(second)).toEqual(Option.none())
            // the first holder's next write checks a moved epoch: nothing written, the run is told
            return yield* Effect.either(write(3))
          }),
        "600"
      )
      expect(outcome._tag === "Left" && outcome.left._tag).toBe("AccountLockLost")
      expect(yield* written).toEqual([1, 2])
    })
  )

  it.scoped.skipIf(embeddedTestDatabase())("a reader role can neither take a lease nor hold one up", () =>
    Effect.gen(function* () {
      const { schema } = yield* TestDatabase
      const sql = yield* SqlClient.SqlClient
      const reader = `i35l_reader_${crypto.randomBytes(3).toString("hex")}`
      yield* sql.unsafe(`CREATE ROLE ${reader} LOGIN PASSWORD 'r'; GRANT USAGE ON SCHEMA ${schema} TO ${reader}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${reader}`)
      yield* Effect.addFinalizer(() => sql.unsafe(`DROP OWNED BY ${reader}; DROP ROLE ${reader}`).pipe(Effect.ignore))
      yield* Effect.scoped((yield* AccountLeases).acquire("acc-reader"))
      const refused = (statement: string) =>
        withPgClient(testDatabaseUrlAs(reader, "r"), (client) =>
          client.query(statement).then(
            () => "ran",
            (e: { code?: string }) => e.code ?? "failed"
          )
        )
      for (const statement of [
        `SELECT 1 FROM ${schema}.account_leases WHERE account_id = 'acc-reader' FOR KEY SHARE`,
        `SELECT 1 FROM ${schema}.account_leases FOR UPDATE`,
        `UPDATE ${schema}.account_leases SET expires_at = 'infinity'`,
        `INSERT INTO ${schema}.account_leases (account_id, epoch, holder, instance, expires_at) VALUES ('acc-x', 99, 'me', 'me', 'infinity')`
      ]) {
        expect(yield* refused(statement), statement).toBe("42501")
      }
      // and the account is still free to take
      expect(yield* Effect.scoped((yield* AccountLeases).acquire("acc-reader"))).toEqual(Option.none())
    })
  )
})

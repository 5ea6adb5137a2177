import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { countFencedWrites, installWriteLog } from "../../../bench/lib/writeLog.js"
import { embeddedTestDatabase, TestDatabase, TestDatabaseLive } from "../../support/database.js"

/** A session of "process" `name` (its application_name, as a worker's sessions carry their host:pid). */
const session = (url: string, schema: string, name: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url, application_name: name, options: `-c search_path=${schema}` })
      client.on("error", () => {})
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  )

const run = (client: pg.Client, statement: string, params: ReadonlyArray<unknown> = []) => Effect.promise(() => client.query(statement, [...params]))

/** A take of the lease as AccountLeases makes it: the row locked (waiting for writes that checked the old epoch), the epoch bumped. */
const take = (client: pg.Client, accountId: string) =>
  Effect.promise(() =>
    client.query(
      `WITH current AS (SELECT epoch FROM account_leases WHERE account_id = $1 FOR UPDATE)
       UPDATE account_leases SET epoch = epoch + 1, holder = current_setting('application_name'), acquired_at = now()
       WHERE account_id = $1 AND (SELECT count(*) FROM current) >= 0`,
      [accountId]
    )
  )

/** A checkpoint write as a run makes it: the lease's epoch checked (key-share lock) in the same statement. */
const fencedWrite = (accountId: string, epoch: number, position: number) =>
  [
    `INSERT INTO sync_checkpoints (account_id, stream, position) SELECT $1, 'jobs', $3
     WHERE EXISTS (SELECT 1 FROM account_leases WHERE account_id = $1 AND epoch = $2 FOR KEY SHARE)
     ON CONFLICT (account_id, stream) DO UPDATE SET position = EXCLUDED.position`,
    [accountId, epoch, position]
  ] as const

/** The same write with no lease check: what a fenced worker would land if the fence were broken. */
const unfencedWrite = (accountId: string, position: number) =>
  [
    `INSERT INTO sync_checkpoints (account_id, stream, position) VALUES ($1, 'jobs', $2)
     ON CONFLICT (account_id, stream) DO UPDATE SET position = EXCLUDED.position`,
    [accountId, position]
  ] as const

// sessions of their own (row locks between two "processes"): a real Postgres
layer(TestDatabaseLive, { timeout: 60_000, excludeTestServices: true })("chaos's write log (Postgres's own record of who wrote what)", (it) => {
  it.scoped.skipIf(embeddedTestDatabase())(
    "counts a write committed after another process took the account's lease, and no write made under the writer's own lease",
    () =>
      Effect.gen(function* () {
        const { url, schema } = yield* TestDatabase
        const logged = yield* installWriteLog(schema)
        expect(logged).toEqual(expect.arrayContaining(["jobs", "sync_checkpoints", "sync_pass_seen", "sync_runs", "invoices"]))
        expect(logged).not.toContain("account_leases")
        const a = yield* session(url, schema, "account-sync worker vm:1001")
        const b = yield* session(url, schema, "account-sync worker vm:1002")

        // A takes the lease of acct-1 and writes under it; a skipped run's row (a refusal) written by B is not a write of the account
        yield* run(a, `INSERT INTO account_leases (account_id, epoch, holder, instance, expires_at) VALUES ('acct-1', 1, current_setting('application_name'), 'a', now() + interval '30 seconds')`)
        yield* run(a, ...fencedWrite("acct-1", 1, 1))
        yield* run(a, `INSERT INTO sync_runs (account_id, stream, kind, lease_epoch) VALUES ('acct-1', 'jobs', 'full', 1)`)
        yield* run(b, `INSERT INTO sync_runs (account_id, stream, kind, finished_at, outcome) VALUES ('acct-1', 'jobs', 'full', now(), 'skipped')`)

        // A's write in flight (its key-share lock held) when B takes the lease: the take waits for it, the write is A's
        yield* run(a, "BEGIN")
        yield* run(a, ...fencedWrite("acct-1", 1, 2))
        const taking = yield* Effect.fork(take(b, "acct-1"))
        yield* Effect.sleep("300 millis")
        yield* run(a, "COMMIT")
        yield* taking.await
        // B writes under its lease; A's next write checks epoch 1 and writes nothing
        yield* run(b, ...fencedWrite("acct-1", 2, 3))
        yield* run(b, `UPDATE sync_runs SET outcome = 'interrupted', finished_at = now() WHERE account_id = 'acct-1' AND outcome = 'running'`)
        yield* run(a, ...fencedWrite("acct-1", 1, 4))
        const clean = yield* countFencedWrites
        expect(clean).toMatchObject({ fenced: 0, unleased: 0, takes: 2 })
        expect(clean.writes).toBe(5)

        // a forged stale write: A writes acct-1 after B took it, with no lease check
        yield* run(a, ...unfencedWrite("acct-1", 99))
        const one = yield* countFencedWrites
        expect(one).toMatchObject({ fenced: 1, unleased: 0 })
        expect(one.examples[0]).toMatch(/UPDATE sync_checkpoints of acct-1 by account-sync worker vm:1001 .* while account-sync worker vm:1002 \(epoch 2\) held it/)

        // a stale write begun before the take but committed after it (no key-share lock held the take off)
        yield* run(a, "BEGIN")
        yield* run(a, `UPDATE sync_runs SET pages = 7 WHERE account_id = 'acct-1'`)
        yield* run(b, `INSERT INTO account_leases (account_id, epoch, holder, instance, expires_at) VALUES ('acct-2', 1, current_setting('application_name'), 'b', now() + interval '30 seconds')`)
        yield* take(a, "acct-2")
        yield* take(b, "acct-1")
        yield* run(a, "COMMIT")
        const two = yield* countFencedWrites
        expect(two).toMatchObject({ fenced: 2, unleased: 0, takes: 5 })

        // a write of an account no one ever leased
        yield* run(b, ...unfencedWrite("acct-3", 0))
        expect(yield* countFencedWrites).toMatchObject({ fenced: 2, unleased: 1 })
      })
  )
})

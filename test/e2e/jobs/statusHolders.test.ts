import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import crypto from "node:crypto"
import pg from "pg"
import type { queueJson } from "../../../src/cli/status.js"
import { AccountLeases } from "../../../src/sync/AccountLeases.js"
import { runCli } from "../../support/cli.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { embeddedTestDatabase, TestDatabase, withPgClient } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"
import { queueTestEnv, withQueue } from "../../support/workers.js"

type QueueJson = ReturnType<typeof queueJson>

const holdersIn = (env: Record<string, string>) =>
  Effect.map(runCli(["status", "--json"], env), (status) => {
    expect(status.code, status.stderr).toBe(0)
    return (JSON.parse(status.stdout) as { queue: QueueJson }).queue.accounts.map((a) => a.heldBy)
  })

layer(syncHarness({ accounts: 1, jobs: 10 }, { env: queueTestEnv }), { timeout: 120_000, excludeTestServices: true })("status's account holders", (it) => {
  it.scoped.skipIf(embeddedTestDatabase())(
    "status names this database's lease holder only: a session of another database on the server holding the same account is no holder",
    () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* connectAccount(accountId)
        const env = yield* TestSettings
        const { url, schema } = yield* TestDatabase
        // the queue set up (status shows it once a worker or serve made it)
        yield* withQueue(env, () => Effect.void)

        // staging beside production: another database on this server, the same schema, a process of it on the same account
        const otherDatabase = `i35l_other_${crypto.randomBytes(4).toString("hex")}`
        yield* Effect.acquireRelease(
          withPgClient(url, (c) => c.query(`CREATE DATABASE ${otherDatabase}`)),
          () => withPgClient(url, (c) => c.query(`DROP DATABASE IF EXISTS ${otherDatabase} WITH (FORCE)`)).pipe(Effect.ignore)
        )
        const otherUrl = new URL(url)
        otherUrl.pathname = `/${otherDatabase}`
        const other = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: otherUrl.toString(), application_name: "staging worker other-host:1" })
            await client.connect()
            return client
          }),
          (client) => Effect.promise(() => client.end())
        )
        yield* Effect.promise(() => other.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`))
        // what account-sync's advisory lock was (two ints: the schema's hash, the account's), and a lease of its own
        yield* Effect.promise(() => other.query(`SELECT pg_advisory_lock(hashtext('account-sync:' || current_schema()), hashtext($1))`, [accountId]))
        yield* Effect.promise(() =>
          other.query(`CREATE TABLE account_leases (account_id text PRIMARY KEY, holder text, expires_at timestamptz);
            INSERT INTO account_leases VALUES ('${accountId}', 'staging worker other-host:1 (pid 1)', 'infinity')`)
        )
        expect(yield* holdersIn(env)).toEqual([null])

        // this database's lease, held by this process: named
        const holders = yield* Effect.scoped(
          Effect.gen(function* () {
            expect(yield* (yield* AccountLeases).acquire(accountId)).toEqual(Option.none())
            return yield* holdersIn(env)
          })
        )
        expect(holders).toEqual([expect.stringMatching(/^.* \(pid \d+\)$/)])
        expect(holders[0]).not.toContain("staging")
        expect(yield* holdersIn(env)).toEqual([null])
      }),
    120_000
  )
})

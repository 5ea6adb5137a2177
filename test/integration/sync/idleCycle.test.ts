import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { measureIdleCycle } from "../../../bench/lib/idleCycle.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { embeddedTestDatabase, TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { namedTestDatabase, syncHarness } from "../../support/syncHarness.js"

const appName = (schema: string) => `idle-${schema}`

/**
 * Per account of an idle cycle, at most: the statements (the connections of the cycle's accounts read in one statement,
 * a third of one each here; its streams' checkpoints read with when their change events were last applied, in one
 * statement; the visits linked to the jobs the pass read that the warehouse does not hold as read (none: the jobs its
 * overlap reads again are held as read, so their visits are neither read again nor landed); each of the 5 incremental
 * streams' pass begun with its run's row, and its page landed ending the pass and its run's row with it; the account's
 * lease taken, closing its runs left running, and released, recording the run's outcome: 14 and a third); the service
 * requests (the account query, one per incremental stream). The token's read, with the connection's status, when
 * its 15 s in-memory copy has lapsed since the first run, is carried by the decision inputs' statement: never a
 * statement of its own. The renewal of the process's leases (one statement for all, every 10 s) is counted apart: how
 * many fall in the cycle depends on its wall time, which a loaded machine stretches.
 * Issue 36's goal is 15 statements; this bounds where the cycle is now, so it can only go down.
 */
const statementsAtMost = 14.34
const tokenReadsAtMost = 0
const requestsAtMost = 6
/** A third of ACCOUNT_LEASE_SECONDS' default (30). */
const renewEveryMs = 10_000

layer(
  syncHarness(
    { accounts: 3, jobs: 5, limits: { maxPoints: 10_000, restoreRate: 100_000 } },
    { env: { SYNC_STREAMS: "", SYNC_EXCLUDE_FIELDS: "" }, database: namedTestDatabase(appName) }
  ),
  { timeout: 120_000, excludeTestServices: true }
)("an idle sync cycle", (it) => {
  it.effect.skipIf(embeddedTestDatabase())("every stream current, nothing changed: statements and service requests per account stay bounded", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const ids = accounts.map((a) => a.accountId)
      for (const id of ids) yield* connectAccount(id)
      const first = yield* (yield* SyncRunner).run({ mode: "sync", accounts: ids })
      expect(first.map((r) => r.outcome)).toEqual(ids.map(() => "synced"))
      const { schema } = yield* TestDatabase
      // measureIdleCycle fails when an account did not sync or a stream landed a row or made a full pass
      const cycle = yield* measureIdleCycle({ accountIds: ids, admin, applicationName: appName(schema), concurrency: 2 })
      expect(cycle.accounts).toBe(3)
      expect(cycle.requestsPerAccount).toBeGreaterThan(0)
      expect(cycle.requestsPerAccount).toBeLessThanOrEqual(requestsAtMost)
      expect(cycle.statementsPerAccount).toBeGreaterThan(0)
      expect(cycle.tokenReadsPerAccount).toBeLessThanOrEqual(tokenReadsAtMost)
      expect(cycle.statementsPerAccount - cycle.leaseRenewalsPerAccount).toBeLessThanOrEqual(statementsAtMost)
      expect(cycle.leaseRenewalsPerAccount * cycle.accounts).toBeLessThanOrEqual(Math.ceil(cycle.wallMs / renewEveryMs) + 1)
    })
  )
})

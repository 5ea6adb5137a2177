import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { QueueNames } from "../../../src/jobs/JobKinds.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"
import { expectNoOverlappingRuns, queueTestEnv, spawnWorker, syncRuns, waitUntil, withQueue } from "../../support/workers.js"

// 1 account of 3,000 jobs, every answer 200 ms late: its backfill runs long enough for a second job to meet it
layer(syncHarness({ accounts: 1, jobs: 3000, limits: { maxPoints: 100_000, restoreRate: 100_000 } }, { env: queueTestEnv }), {
  timeout: 240_000,
  excludeTestServices: true
})("two jobs of one account in one worker", (it) => {
  it.scoped(
    "two backfill jobs of one account under other queue keys, claimed by one worker: one runs, the other waits for it; never two runs at once, none interrupted by its sibling",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { accounts, admin } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        yield* connectAccount(accountId)
        const settings = yield* TestSettings
        const { url, schema } = yield* TestDatabase
        yield* admin.setFaults({ latencyRate: 1, latencyMs: 200, seed: 9 })
        yield* Effect.addFinalizer(() => Effect.orDie(admin.setFaults({})))
        // the queue set up as a worker would, then two jobs written past its one-key-per-account rule (as the security
        // review forged them: the app role can write the queue), so one worker claims both at once
        yield* withQueue(settings, () => Effect.void)
        const { PgBoss } = yield* Effect.promise(() => import("pg-boss"))
        const boss = new PgBoss({ connectionString: url, schema: `${schema}_queue`, supervise: false, schedule: false, migrate: false })
        yield* Effect.acquireRelease(
          Effect.promise(() => boss.start()),
          () => Effect.promise(() => boss.stop({ graceful: false }))
        )
        const at = new Date().toISOString()
        const job = { kind: "backfill", accountId, dueAt: at, requestedAt: at, restart: true, streams: ["jobs"] }
        for (const key of ["forged-a", "forged-b"]) yield* Effect.promise(() => boss.send(QueueNames.accounts, job, { singletonKey: key }))

        yield* spawnWorker(settings, 4)
        const runs = yield* waitUntil(
          "the backfill done and the second job come back to find it done",
          180,
          Effect.map(
            Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${schema}_queue`)}.job WHERE name = ${QueueNames.accounts} AND state IN ('created', 'retry', 'active')`),
            (r) => r[0]!.n === 0
          )
        ).pipe(Effect.zipRight(syncRuns))
        // the sibling was refused while the first ran (skipped, naming this worker), and ran nothing beside it
        const skipped = yield* sql<{ error: string }>`SELECT error FROM sync_runs WHERE outcome = 'skipped'`
        expect(skipped.length).toBeGreaterThan(0)
        for (const s of skipped) expect(s.error).toMatch(/^another run of this process is syncing this account \(held by .* worker .*\)/)
        const ran = runs.filter((r) => r.outcome !== "skipped")
        // (the worker's own tick may add a sync job under the account's key: refused or run after, never beside)
        expect(ran.filter((r) => r.outcome !== "succeeded").map((r) => `${r.id} ${r.kind} ${r.outcome}`)).toEqual([])
        // one full pass: run once, or continued by the sibling after a slice ended (both jobs asked for it at once,
        // so the sibling resumes the pass they share rather than starting another), never two at the same time
        expect(ran.filter((r) => r.kind === "full").length).toBeGreaterThanOrEqual(1)
        expectNoOverlappingRuns(ran)
        expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(3000)
      }),
    240_000
  )
})

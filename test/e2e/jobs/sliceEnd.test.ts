import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"
import { accountsFullySynced, backfillEnqueuedAtLatency, expectNoOverlappingRuns, queueTestEnv, spawnWorker, syncRuns, waitUntil } from "../../support/workers.js"

const jobs = 600

// every answer 1.5 s late and slices of 1 s: a page's answer outlasts its slice. Interrupted at the slice's end, every
// page in flight was thrown away, and the backfill never advanced; ended at a page boundary, each slice lands what it
// fetched.
layer(syncHarness({ accounts: 1, jobs, limits: { maxPoints: 10_000, restoreRate: 10_000 } }, { env: { ...queueTestEnv, QUEUE_SLICE: "1 second" } }), {
  timeout: 240_000,
  excludeTestServices: true
})("a slice's end (worker process)", (it) => {
  it.scoped("a slice shorter than one answer of the service still lands what it fetched: each sliced run lands pages, the backfill ends exact", () =>
    Effect.gen(function* () {
      const { accountId, env } = yield* backfillEnqueuedAtLatency(1_500, 5)
      const sql = yield* SqlClient.SqlClient
      yield* spawnWorker(env)
      yield* waitUntil("the backfill's end across slices", 180, Effect.map(accountsFullySynced, (n) => n === 1))
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
      const runs = yield* syncRuns
      const sliced = runs.filter((r) => r.outcome === "interrupted")
      expect(sliced.length).toBeGreaterThan(0)
      // every slice's run stopped after landing what it had fetched: none ended with nothing landed
      const pages = yield* Effect.orDie(sql<{ id: number; pages: number }>`SELECT id, pages FROM sync_runs WHERE outcome = 'interrupted' ORDER BY id`)
      expect(pages.filter((r) => r.pages === 0)).toEqual([])
      expectNoOverlappingRuns(runs)
    }),
    240_000
  )
})

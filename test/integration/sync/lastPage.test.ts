import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { onBucketClock } from "../../support/bucketClock.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream, jobsOnlySettings } from "../../support/jobsOnly.js"
import { serviceProxy } from "../../support/proxy.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

/*
 * A list's last page is asked no larger than the rows left in it. With a bucket that binds, a page sized by the full
 * bucket waits for a full bucket's points before it is asked; the last page of a small list needs a fraction of them.
 * 40 jobs and a bucket of 600 points restoring at 10 a second: a full page is about half the list. The pager asks the
 * list's count when the bucket cannot hold a full page, and cuts the last page to the rows the count leaves: the run
 * waits for the points it spends beyond the first bucket, not for a full bucket at the end.
 */
const jobs = 40
const limits = { maxPoints: 600, restoreRate: 10 }
const longestWaitMs = (limits.maxPoints / limits.restoreRate) * 1000 + 1000

type Asked = { readonly op: "page"; readonly offset: number; readonly first: number } | { readonly op: "count" }
const asked: Array<Asked> = []
/** A count the service answers below what its pages hold (a service that leaves out of `totalCount` what it withholds). */
let countShortBy = 0
const recording = serviceProxy({
  before: ({ operationName, variables }) =>
    Effect.sync(() => {
      if (operationName === "JobsPage") asked.push({ op: "page", offset: variables.offset as number, first: variables.first as number })
      if (operationName === "JobsCount") asked.push({ op: "count" })
    }),
  after: ({ operationName, answer }) => {
    if (operationName !== "JobsCount" || countShortBy === 0) return answer
    const body = JSON.parse(answer) as { data: { jobs: { totalCount: number } } }
    body.data.jobs.totalCount -= countShortBy
    return JSON.stringify(body)
  }
})

layer(
  syncHarness(
    { accounts: 1, jobs, limits },
    { serviceUrl: recording, env: { ...jobsOnlySettings, GRAPHQL_REQUEST_TIMEOUT: "1 hour", TOKEN_REQUEST_TIMEOUT: "1 hour" } }
  ),
  { timeout: 120_000, excludeTestServices: true }
)("the last page of a list, with the bucket binding", (it) => {
  it.effect("is cut to the rows left (counted when the bucket cannot hold a full page): the run waits only for the points it spends beyond a bucket", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      yield* admin.resetStats()
      asked.length = 0
      const { result: reports } = yield* onBucketClock(longestWaitMs, Effect.flatMap(SyncRunner, (runner) => runner.run({ mode: "backfill", accounts: [accountId] })))
      expect(reports.map((r) => r.outcome)).toEqual(["synced"])
      const pages = asked.filter((a) => a.op === "page")
      const full = pages[0]!.first
      expect(full).toBeLessThan(jobs)
      const last = pages[pages.length - 1]!
      expect(last.offset + last.first, "the last page ends at the list's end").toBe(jobs)
      expect(last.first, "the last page is smaller than a full one").toBeLessThan(full)
      // the count is asked once, after the first page (the bucket, unknown before, could not hold the second), and the
      // pass's own count at its end
      const lastPageAt = asked.lastIndexOf(last)
      expect(asked.slice(0, lastPageAt + 1).map((a) => a.op)).toEqual(["page", "count", ...pages.slice(1).map(() => "page")])
      expect(yield* admin.stats()).toMatchObject({ throttled: 0 })
      const { costPoints, throttleWaitMs } = reports[0]!.streams[0]!.counts
      const beyondBucketMs = ((costPoints - limits.maxPoints) / limits.restoreRate) * 1000
      expect(throttleWaitMs).toBeGreaterThanOrEqual(beyondBucketMs * 0.9)
      expect(throttleWaitMs, "no wait for points the run does not spend").toBeLessThanOrEqual(beyondBucketMs + 3000)
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
    })
  )

  it.effect("a count that leaves no row where the list goes on is not used: pages keep their full size, the count is not asked again", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      // from a full bucket, as the first test started
      yield* admin.advanceClock({ seconds: limits.maxPoints / limits.restoreRate + 1 })
      asked.length = 0
      countShortBy = 30
      const { result: reports } = yield* onBucketClock(
        longestWaitMs,
        Effect.flatMap(SyncRunner, (runner) => runner.run({ mode: "backfill", restart: true, accounts: [accountId] }))
      ).pipe(Effect.ensuring(Effect.sync(() => (countShortBy = 0))))
      expect(reports.map((r) => r.outcome)).toEqual(["synced"])
      const pages = asked.filter((a) => a.op === "page")
      const full = pages[0]!.first
      expect(pages.map((p) => p.first), "every page asked at the full size").toEqual(pages.map(() => full))
      const lastPageAt = asked.lastIndexOf(pages[pages.length - 1]!)
      expect(asked.slice(0, lastPageAt + 1).filter((a) => a.op === "count"), "the count asked once").toHaveLength(1)
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Option } from "effect"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { serviceProxy } from "../../support/proxy.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { pagesToRead, syncHarness } from "../../support/syncHarness.js"

/*
 * While pages come back full, the Pager asks the page after the one it is fetching before that one's answer is in
 * (the service prepares it while the connector reads and checks the page before). A proxy holds the answer of the
 * second page until the third page's request has come: without the page asked ahead it never comes while the second
 * is held (the hold gives up after a bound, and the test fails saying so).
 */

const jobs = 1000
const first = jobScalarsStream.maxPageSize
/** The offsets the pass asks (each page one row before where the last ended): 0, 99, 198, ... */
const offsets = Array.from({ length: pagesToRead(jobs, first) }, (_, k) => k * (first - 1))

const asked: Array<number> = []
let thirdAsked: Deferred.Deferred<void> | undefined
let thirdCameWhileSecondHeld: boolean | undefined

const holdingProxy = serviceProxy({
  before: ({ operationName, variables }) =>
    Effect.gen(function* () {
      if (operationName !== "JobsPage" || thirdAsked === undefined) return
      const offset = variables.offset as number
      asked.push(offset)
      if (offset === offsets[2]) yield* Deferred.succeed(thirdAsked, undefined)
      if (offset === offsets[1]) {
        const came = yield* Deferred.await(thirdAsked).pipe(Effect.timeout("3 seconds"), Effect.option)
        thirdCameWhileSecondHeld = Option.isSome(came)
      }
    })
})

layer(syncHarness({ accounts: 1, jobs, limits: { maxPoints: 1_000_000, restoreRate: 1_000_000 } }, { serviceUrl: holdingProxy }), {
  timeout: 120_000,
  excludeTestServices: true
})("pages fetched ahead", (it) => {
  it.effect("the next page is asked while the one before is answered; every row lands once, and at most one page past the end is asked and dropped", () =>
    Effect.gen(function* () {
      const { accounts } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      thirdAsked = yield* Deferred.make<void>()
      const [report] = yield* (yield* SyncRunner).run({ mode: "backfill", accounts: [accountId] })
      // (held for 3 s at most: within the connector's request timeout here, GRAPHQL_REQUEST_TIMEOUT 5 seconds)
      expect(thirdCameWhileSecondHeld, "the third page was asked while the second was held").toBe(true)
      expect(report!.outcome).toBe("synced")
      // the pages of the pass, in order; the page after the last one (fetched ahead while it was) is asked at most
      expect(report!.streams[0]!.counts.pages).toBe(offsets.length)
      // (two requests in flight may reach the service in either order)
      const inOrder = [...asked].sort((a, b) => a - b)
      expect(inOrder.slice(0, offsets.length)).toEqual(offsets)
      expect(inOrder.slice(offsets.length)).toEqual(asked.length > offsets.length ? [offsets.length * (first - 1)] : [])
      expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(jobs)
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runExit } from "../../../src/cli/summary.js"
import { SyncRunner } from "../../../src/sync/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { serviceProxy } from "../../support/proxy.js"
import { syncHarness } from "../../support/syncHarness.js"

/** A proxy that pads the second jobs page's answer to 200 KiB (valid JSON: white space after the object). */
let jobsPages = 0
const inflatingProxy = serviceProxy({
  after: ({ operationName, answer }) => (operationName === "JobsPage" && ++jobsPages === 2 ? answer + " ".repeat(200 * 1024) : answer)
})

layer(
  syncHarness({ accounts: 1, jobs: 500 }, { serviceUrl: inflatingProxy, env: { GRAPHQL_MAX_RESPONSE_BYTES: "131072" } }),
  { timeout: 60_000, excludeTestServices: true }
)("GraphQL answers are capped in size (GRAPHQL_MAX_RESPONSE_BYTES)", (it) => {
  it.effect("an answer over the cap is not read, not retried, and fails the stream with a line naming the account, the stream and the setting", () =>
    Effect.gen(function* () {
      const accountId = (yield* TestEmulator).accounts[0]!.accountId
      yield* connectAccount(accountId)
      const [report] = yield* (yield* SyncRunner).run({ mode: "backfill" })
      expect(report!.outcome).toBe("failed")
      expect(report!.streams.map((s) => [s.stream, s.outcome])).toEqual([["jobs", "failed"]])
      expect(jobsPages).toBe(2)
      const { message } = runExit([report!])
      expect(message).toMatch(
        new RegExp(`^failed: .+ \\(${accountId}\\): jobs: JobsPage: the service's answer is larger than GRAPHQL_MAX_RESPONSE_BYTES \\(131072 bytes\\); it was not read`)
      )
    })
  )
})

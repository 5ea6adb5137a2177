import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runExit } from "../../../src/cli/summary.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { serviceProxy } from "../../support/proxy.js"
import { syncHarness } from "../../support/syncHarness.js"

/** A proxy that pads the second jobs page's answer (offset 99) to 200 KiB (valid JSON: white space after the object). */
const jobsPagesAsked: Array<number> = []
const inflatingProxy = serviceProxy({
  after: ({ operationName, variables, answer }) => {
    if (operationName !== "JobsPage") return answer
    jobsPagesAsked.push(variables.offset as number)
    return variables.offset === 99 ? answer + " ".repeat(200 * 1024) : answer
  }
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
      // the second page asked once (the third may have been fetched ahead meanwhile), nothing after it
      expect(jobsPagesAsked.filter((offset) => offset === 99)).toEqual([99])
      expect(jobsPagesAsked.filter((offset) => offset > 198)).toEqual([])
      const { message } = runExit([report!])
      expect(message).toMatch(
        new RegExp(`^failed: .+ \\(${accountId}\\): jobs: JobsPage: the service's answer is larger than GRAPHQL_MAX_RESPONSE_BYTES \\(131072 bytes\\); it was not read`)
      )
    })
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Checkpoints } from "../../../src/sync/pass/Checkpoints.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { connectAccount } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { serviceProxy } from "../../support/proxy.js"
import { syncHarness } from "../../support/syncHarness.js"

/**
 * A proxy that corrupts one field of one node of the second jobs page: the emulator only serves valid data, and this
 * is what a changed or broken service would send.
 */
let jobsPages = 0
const corruptingProxy = serviceProxy({
  after: ({ operationName, answer }) => {
    if (operationName !== "JobsPage" || ++jobsPages !== 2) return answer
    const json = JSON.parse(answer)
    json.data.jobs.nodes[7].jobNumber = "seven"
    return JSON.stringify(json)
  }
})

layer(syncHarness({ accounts: 1, jobs: 500 }, { serviceUrl: corruptingProxy }), { timeout: 60_000, excludeTestServices: true })(
  "a node that fails its schema",
  (it) => {
    it.effect("fails the account's run naming account, stream, field and position, and commits nothing of that page", () =>
      Effect.gen(function* () {
        const { accounts } = yield* TestEmulator
        const accountId = accounts[0]!.accountId
        const sql = yield* SqlClient.SqlClient
        yield* connectAccount(accountId)
        const [report] = yield* (yield* SyncRunner).run({ mode: "backfill" })
        expect(report!.outcome).toBe("failed")
        const position = Option.getOrThrow(yield* (yield* Checkpoints).read(accountId, "jobs")).position
        expect(position).toBe(100)
        const message = report!.message!
        expect(message).toContain(`account ${accountId}`)
        expect(message).toContain("stream jobs")
        expect(message).toContain("field `jobNumber`")
        // the failing page was asked one row before the end of the landed ones (to join on it)
        expect(message).toContain(`page at position ${position - 1}`)
        expect(message).toContain("nothing of that page was stored")
        // only the first page (100 rows) landed; the checkpoint still points after it
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`
        expect(rows[0]!.n).toBe(100)
        const runs = yield* sql<{ outcome: string; pages: number; error: string }>`SELECT outcome, pages, error FROM sync_runs`
        // the account's message names the failed stream, then the stream's own error (as sync_runs keeps it)
        expect(runs.map((r) => ({ ...r, error: `jobs: ${r.error}` }))).toEqual([{ outcome: "failed", pages: 1, error: message }])
      })
    )
  }
)

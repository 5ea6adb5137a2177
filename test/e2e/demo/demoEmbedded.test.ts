import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { runDemo } from "../../../src/demo/Demo.js"

// the demo as `npm run demo` runs it on a machine without Postgres (demo.test.ts runs it on TEST_DATABASE_URL)
describe("demo on the embedded Postgres", () => {
  it.effect(
    "runs on the embedded Postgres too (no DATABASE_URL): every account exact",
    () =>
      Effect.gen(function* () {
        const result = yield* runDemo({ dataDir: "memory", databaseUrl: Option.none(), schema: "account_sync_demo", jobsPerAccount: 300 })
        expect(result.accounts.map((a) => [a.matches, a.status])).toEqual([
          [true, "active"],
          [true, "disconnected"]
        ])
      }),
    120_000
  )
})

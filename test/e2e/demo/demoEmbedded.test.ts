import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { runDemo } from "../../../src/demo/Demo.js"

// the demo as `npm run demo` runs it on a machine without Postgres (demo.test.ts runs it on TEST_DATABASE_URL); live:
// its clock is the real one, as in the program
describe("demo on the embedded Postgres", () => {
  it.live(
    "runs on the embedded Postgres too (no DATABASE_URL): every account exact",
    () =>
      Effect.gen(function* () {
        const printed: Array<string> = []
        const result = yield* Effect.acquireUseRelease(
          Effect.sync(() => {
            const log = console.log
            console.log = (...args: Array<unknown>) => {
              printed.push(args.map(String).join(" "))
              log(...args)
            }
            return log
          }),
          () => runDemo({ dataDir: "memory", databaseUrl: Option.none(), schema: "account_sync_demo", jobsPerAccount: 300 }),
          (log) => Effect.sync(() => void (console.log = log))
        )
        expect(result.accounts.map((a) => [a.matches, a.status])).toEqual([
          [true, "active"],
          [true, "disconnected"]
        ])
        // in memory: nothing is said to stay in a directory, and nothing of the working directory was removed
        expect(printed.join("\n")).toContain("The data was in memory and is gone with the demo")
        expect(printed.join("\n")).not.toContain("The data stays in")
      }),
    300_000
  )
})

/**
 * `npm run chaos [-- --seed N] [-- --quick] [-- --keep]`: a seeded chaos run of the connector against the emulator.
 * Prints its seed, the faults injected and PASS/FAIL per check; exits 1 on any FAIL. See bench/README.md.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { chaosDefaults, type ChaosOptions } from "./lib/chaosOptions.js"
import { renderChaos } from "./lib/chaosReport.js"
import { runChaos } from "./lib/chaos.js"
import { quickChaos } from "./lib/chaosQuick.js"

const args = process.argv.slice(2)
const seedArg = args.indexOf("--seed")
const seed = seedArg >= 0 ? Number(args[seedArg + 1]) : Math.floor(Math.random() * 1_000_000)
if (!Number.isInteger(seed) || seed < 0) {
  process.stderr.write("chaos: --seed expects a whole number\n")
  process.exit(2)
}
const options: ChaosOptions = { ...(args.includes("--quick") ? quickChaos(seed) : chaosDefaults(seed)), keepSchema: args.includes("--keep") }

NodeRuntime.runMain(
  Effect.gen(function* () {
    const report = yield* runChaos(options)
    process.stdout.write(`\n${renderChaos(report)}\n`)
    if (!report.ok) process.exitCode = 1
  })
)

/**
 * `tsx bench/scaleHealing.ts [--quick] [--accounts N --jobs N]`: only the scale bench's healing runs (a worker
 * SIGKILLed with the backfill cap full, a worker SIGSTOPped), printing `failoverSecondsUnderCap` and
 * `hungWorkerReleaseSeconds` as JSON with the load average. `npm run bench -- --only scale` runs them with the rest.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as os from "node:os"
import { startEmulatorProcess } from "./lib/emulatorProcess.js"
import { defaultScaleOptions, quickScaleOptions } from "./lib/scaleOptions.js"
import { healingRuns } from "./lib/scaleHealing.js"

const args = process.argv.slice(2)
const flag = (name: string) => (args.indexOf(`--${name}`) >= 0 ? Number(args[args.indexOf(`--${name}`) + 1]) : undefined)
const base = (args.includes("--quick") ? quickScaleOptions : defaultScaleOptions).healing
const jobs = flag("jobs")
const options = { ...base, ...(flag("accounts") !== undefined ? { capAccounts: flag("accounts")! } : {}), ...(jobs !== undefined ? { capJobs: jobs, hungJobs: jobs } : {}) }

NodeRuntime.runMain(
  Effect.scoped(
    Effect.gen(function* () {
      const loadBefore = os.loadavg()
      const emulator = yield* startEmulatorProcess()
      const result = yield* healingRuns(emulator, options)
      process.stdout.write(`${JSON.stringify({ ...result, options, loadAverageBefore: loadBefore, loadAverageAfter: os.loadavg() }, null, 2)}\n`)
    })
  )
)

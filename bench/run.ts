/**
 * `npm run bench [-- --quick] [-- --only budget,landing,writePath,memory,accounts,exactness,freshness,wholeAccount,scale,history] [-- --out file]`
 *   sizes: --landing-jobs N --write-path-jobs N --history-jobs N --budget-jobs N --budget-max-points P --floor S --memory-jobs N,M --concurrency a,b,c --exactness-jobs N
 *          --freshness-accounts N --freshness-seconds S --edits-per-second R --burst-per-second R --burst-load-workers N --burst-load-jobs N
 *          --whole-account-jobs N --whole-account-max-points P --whole-account-floor S
 *          --scale-accounts N --scale-jobs N --scale-processes a,b,c --scale-concurrency N --scale-one-worker-accounts N
 *          --scale-idle-accounts N --scale-idle-cycles N --scale-idle-only (the idle cycle alone; the earlier scale figures kept)
 * Prints a table and writes bench/results.json (with --only: into the existing file, replacing only what ran). See
 * bench/README.md for the method.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type BenchOptions, defaultOptions, quickOptions, runBench, writeResults } from "./lib/bench.js"
import { renderResults } from "./lib/report.js"

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const base: BenchOptions = args.includes("--quick") ? quickOptions : defaultOptions
const only = flag("only")?.split(",")
const options: BenchOptions = {
  ...base,
  ...(only ? { only: only as BenchOptions["only"] } : {}),
  ...(flag("memory-jobs") ? { memoryJobs: flag("memory-jobs")!.split(",").map(Number) } : {}),
  ...(flag("landing-jobs") ? { landingJobs: Number(flag("landing-jobs")) } : {}),
  ...(flag("write-path-jobs") ? { writePathJobs: Number(flag("write-path-jobs")) } : {}),
  ...(flag("history-jobs") ? { historyJobs: Number(flag("history-jobs")) } : {}),
  ...(flag("budget-jobs") ? { budgetJobs: Number(flag("budget-jobs")) } : {}),
  ...(flag("budget-max-points") ? { budgetMaxPoints: Number(flag("budget-max-points")) } : {}),
  ...(flag("floor") ? { floorSec: Number(flag("floor")) } : {}),
  ...(flag("concurrency") ? { concurrencies: flag("concurrency")!.split(",").map(Number) } : {}),
  ...(flag("exactness-jobs") ? { exactnessJobs: Number(flag("exactness-jobs")) } : {}),
  freshness: {
    ...base.freshness,
    ...(flag("freshness-accounts") ? { accounts: Number(flag("freshness-accounts")) } : {}),
    ...(flag("freshness-seconds") ? { seconds: Number(flag("freshness-seconds")) } : {}),
    ...(flag("edits-per-second") ? { editsPerSecond: Number(flag("edits-per-second")) } : {}),
    ...(flag("burst-per-second") ? { burstPerSecond: Number(flag("burst-per-second")) } : {}),
    ...(flag("burst-load-workers") ? { burstLoadWorkers: Number(flag("burst-load-workers")) } : {}),
    ...(flag("burst-load-jobs") ? { burstLoadJobs: Number(flag("burst-load-jobs")) } : {})
  },
  ...(flag("whole-account-jobs") ? { wholeAccountJobs: Number(flag("whole-account-jobs")) } : {}),
  ...(flag("whole-account-max-points") ? { wholeAccountMaxPoints: Number(flag("whole-account-max-points")) } : {}),
  ...(flag("whole-account-floor") ? { wholeAccountFloorSec: Number(flag("whole-account-floor")) } : {}),
  scale: {
    ...base.scale,
    ...(flag("scale-accounts") ? { accounts: Number(flag("scale-accounts")) } : {}),
    ...(flag("scale-jobs") ? { jobsPerAccount: Number(flag("scale-jobs")) } : {}),
    ...(flag("scale-processes") ? { processes: flag("scale-processes")!.split(",").map(Number) } : {}),
    ...(flag("scale-concurrency") ? { concurrencyPerWorker: Number(flag("scale-concurrency")) } : {}),
    ...(flag("scale-one-worker-accounts") ? { oneWorkerAccounts: Number(flag("scale-one-worker-accounts")) } : {}),
    idleCycle: {
      ...base.scale.idleCycle,
      ...(flag("scale-idle-accounts") ? { accounts: Number(flag("scale-idle-accounts")) } : {}),
      ...(flag("scale-idle-cycles") ? { cycles: Number(flag("scale-idle-cycles")) } : {})
    },
    ...(args.includes("--scale-idle-only") ? { idleOnly: true } : {})
  }
}
const out = flag("out") ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "results.json")

NodeRuntime.runMain(
  Effect.gen(function* () {
    const results = yield* runBench(options, `npm run bench${args.length > 0 ? ` -- ${args.join(" ")}` : ""}`)
    yield* writeResults(results, out)
    process.stdout.write(`\n${renderResults(results)}\nwritten to ${out}\n`)
  }),
  { disableErrorReporting: false }
)

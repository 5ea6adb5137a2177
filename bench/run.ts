/**
 * `npm run bench [-- --quick] [-- --only budget,landing,writePath,memory,accounts,exactness,freshness,wholeAccount,scale,history] [-- --out file]`
 *   sizes: --landing-jobs N --write-path-jobs N --history-jobs N --budget-jobs N --budget-max-points P --floor S --memory-jobs N,M --concurrency a,b,c --exactness-jobs N
 *          --freshness-accounts N --freshness-seconds S --edits-per-second R --burst-per-second R --burst-load-workers N --burst-load-jobs N
 *          --whole-account-jobs N --whole-account-max-points P --whole-account-floor S
 *          --scale-accounts N --scale-jobs N --scale-processes a,b,c --scale-concurrency N --scale-one-worker-accounts N
 *          --scale-restore-rate N --scale-parts idle,workers,failover,healing,oneWorker
 *          --scale-idle-accounts N --scale-idle-cycles N --scale-idle-only (= --scale-parts idle; a run of some parts keeps the earlier figures of the others)
 * Prints a table and writes bench/results.json (with --only: into the existing file, replacing only what ran). See
 * bench/README.md for the method.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type BenchName, type BenchOptions, defaultOptions, quickOptions, runBench, writeResults } from "./lib/bench.js"
import { type ScalePart, scaleParts } from "./lib/scaleOptions.js"
import { renderResults } from "./lib/report.js"

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
/** A list flag whose every item must be one of `allowed`: anything else stops the run at once, naming the flag and the item. */
const listOf = <T extends string>(name: string, allowed: ReadonlyArray<T>): Array<T> | undefined => {
  const items = flag(name)?.split(",")
  const wrong = items?.find((item) => !(allowed as ReadonlyArray<string>).includes(item))
  if (wrong !== undefined) {
    console.error(`bench: --${name} ${JSON.stringify(wrong)} is not one of ${allowed.join(", ")}`)
    process.exit(2)
  }
  return items as Array<T> | undefined
}
const base: BenchOptions = args.includes("--quick") ? quickOptions : defaultOptions
const only = listOf<BenchName>("only", ["budget", "landing", "writePath", "memory", "accounts", "exactness", "freshness", "wholeAccount", "scale", "history"])
const parts = args.includes("--scale-idle-only") ? (["idle"] as Array<ScalePart>) : listOf<ScalePart>("scale-parts", scaleParts)
const options: BenchOptions = {
  ...base,
  ...(only ? { only } : {}),
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
    ...(flag("scale-restore-rate") ? { restoreRate: Number(flag("scale-restore-rate")) } : {}),
    ...(parts ? { parts } : {}),
    idleCycle: {
      ...base.scale.idleCycle,
      ...(flag("scale-idle-accounts") ? { accounts: Number(flag("scale-idle-accounts")) } : {}),
      ...(flag("scale-idle-cycles") ? { cycles: Number(flag("scale-idle-cycles")) } : {})
    }
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

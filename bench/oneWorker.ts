/**
 * `npx tsx bench/oneWorker.ts [--accounts 100,1] [--jobs 600] [--rounds 1] [--cpu-prof dir] [--heap-prof dir]`
 * The scale bench's one-worker run alone, at the sizes given (each size in turn, `rounds` times, interleaved):
 * the worker's CPU per 10,000 rows against the number of accounts it holds. With `--cpu-prof` (`--heap-prof`) each worker
 * writes a V8 CPU (sampling heap) profile into `dir`. Prints one JSON line per run.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as os from "node:os"
import { benchDatabaseUrl } from "./lib/database.js"
import { startEmulatorProcess } from "./lib/emulatorProcess.js"
import { oneWorkerRun } from "./lib/scale.js"
import { defaultScaleOptions } from "./lib/scaleOptions.js"

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const sizes = (flag("accounts") ?? "100,1").split(",").map(Number)
const jobs = Number(flag("jobs") ?? 600)
const rounds = Number(flag("rounds") ?? 1)
const profileDir = flag("cpu-prof")
const heapProfileDir = flag("heap-prof")

/** Transactions committed in the bench's database so far (every statement outside a transaction is one). */
const commits = () =>
  Number(execFileSync("psql", [benchDatabaseUrl(), "-XAtc", "SELECT pg_stat_force_next_flush(); SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"]).toString().trim().split("\n").pop())

NodeRuntime.runMain(
  Effect.scoped(
    Effect.gen(function* () {
      const emulator = yield* startEmulatorProcess()
      // the workers started from here on inherit it (the emulator above did not)
      const profiles = [profileDir ? `--cpu-prof --cpu-prof-dir=${profileDir}` : "", heapProfileDir ? `--heap-prof --heap-prof-dir=${heapProfileDir}` : ""].join(" ").trim()
      if (profiles !== "") process.env.NODE_OPTIONS = profiles
      for (let round = 0; round < rounds; round++) {
        for (const accounts of sizes) {
          const before = commits()
          const { result } = yield* oneWorkerRun(emulator, { ...defaultScaleOptions, oneWorkerAccounts: accounts, oneWorkerJobs: jobs })
          process.stdout.write(`${JSON.stringify({ round, ...result, transactionsPer10kRows: ((commits() - before) * 10_000) / (result.rowsPerSecond * result.seconds), loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100) })}\n`)
        }
      }
    })
  ),
  { disableErrorReporting: false }
)

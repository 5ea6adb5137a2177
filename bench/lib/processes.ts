import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { BenchError } from "./errors.js"
import { binPath, nodeArgs, nodeEnv } from "./emulatorProcess.js"

export interface ChildResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly wallMs: number
  /** Peak RSS of the connector process in MB, when measured with /usr/bin/time -v. */
  readonly peakRssMb?: number
  /** User and system CPU seconds of the connector process, when measured with /usr/bin/time -v. */
  readonly cpu?: { readonly userSec: number; readonly systemSec: number }
  readonly stderrTail: string
}

const TIME = "/usr/bin/time"

/**
 * `node bin/account-sync.mjs <args>` as a child, under `/usr/bin/time -v` when present (peak RSS of the node
 * process itself: time waits on it and reports its ru_maxrss). stdout is dropped, the tail of stderr kept.
 */
export const runConnectorChild = (args: ReadonlyArray<string>, env: Record<string, string>, options: { readonly measureRss?: boolean } = {}) =>
  Effect.async<ChildResult, BenchError>((resume) => {
    const useTime = options.measureRss === true && fs.existsSync(TIME)
    const command = useTime ? TIME : process.execPath
    const argv = useTime ? ["-v", process.execPath, ...nodeArgs, binPath, ...args] : [...nodeArgs, binPath, ...args]
    const started = performance.now()
    const child = spawn(command, argv, { env: { ...process.env, ...nodeEnv, LOG_LEVEL: "WARN", ...env }, stdio: ["ignore", "ignore", "pipe"] })
    let tail = ""
    child.stderr!.on("data", (c: Buffer) => void (tail = (tail + c.toString()).slice(-20_000)))
    child.once("error", (e) => resume(Effect.fail(new BenchError({ step: `child ${args.join(" ")}`, reason: e.message }))))
    child.once("exit", (code, signal) => {
      const wallMs = performance.now() - started
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(tail)
      const user = /User time \(seconds\): ([\d.]+)/.exec(tail)
      const system = /System time \(seconds\): ([\d.]+)/.exec(tail)
      resume(Effect.succeed({
        code,
        signal,
        wallMs,
        stderrTail: tail,
        ...(kb ? { peakRssMb: Number(kb[1]) / 1024 } : {}),
        ...(user && system ? { cpu: { userSec: Number(user[1]), systemSec: Number(system[1]) } } : {})
      }))
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

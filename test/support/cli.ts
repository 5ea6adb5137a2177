import { Deferred, Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/account-sync.mjs")

export interface CliResult {
  readonly code: number | null
  /** The signal that ended the process, when one did. */
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `node bin/account-sync.mjs ...args` as a child process with `env` added to a minimal environment; killed when
 * the scope closes. `firstLine` is the first stdout line, `exit` the whole run. `script` replaces the absolute path
 * of bin/account-sync.mjs as typed (a relative path, a symbolic link), run from the repository's root.
 */
export const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string>, script: string = bin) =>
  Effect.gen(function* () {
    const firstLine = yield* Deferred.make<string, string>()
    const exit = yield* Deferred.make<CliResult>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [script, ...args], {
          cwd: path.dirname(path.dirname(bin)),
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_FORMAT: "json", LOG_LEVEL: "debug", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const newline = stdout.indexOf("\n")
      if (newline >= 0) Deferred.unsafeDone(firstLine, Effect.succeed(stdout.slice(0, newline)))
    })
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("close", (code, signal) => {
      Deferred.unsafeDone(firstLine, Effect.fail(`exited (${code ?? signal}) before printing a line; stderr: ${stderr}`))
      Deferred.unsafeDone(exit, Effect.succeed({ code, signal, stdout, stderr }))
    })
    return {
      child,
      firstLine: Deferred.await(firstLine).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => `no stdout line within 60s; stderr: ${stderr}` }), Effect.orDie),
      // generous: seven CLI processes and a PGlite each on a loaded two-CPU CI machine; on a timeout, what the
      // process was doing (its state, kernel wait channel and thread count) for the next look
      exit: Deferred.await(exit).pipe(
        Effect.timeoutFail({ duration: "120 seconds", onTimeout: () => `no exit within 120s (${processState(child.pid)}); stderr: ${stderr}` }),
        Effect.orDie
      )
    }
  })

/** A stuck child's state from /proc (Linux): state, wait channel, threads. */
const processState = (pid: number | undefined): string => {
  if (pid === undefined) return "no pid"
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const field = (name: string) => status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1] ?? "?"
    const wchan = fs.readFileSync(`/proc/${pid}/wchan`, "utf8")
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(2).join(" ")
    const threads = fs.readdirSync(`/proc/${pid}/task`).map((t) => {
      try {
        return `${fs.readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim()}:${fs.readFileSync(`/proc/${pid}/task/${t}/wchan`, "utf8")}`
      } catch {
        return t
      }
    })
    return `pid ${pid} (${args}) state ${field("State")}, wchan ${wchan || "-"}, threads ${threads.join(" ")}`
  } catch {
    return `pid ${pid} gone`
  }
}

/** Runs a command to its end. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.scoped(Effect.flatMap(spawnCli(args, env), (c) => c.exit))

import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"

/** Whether `promtool` (Debian package `prometheus`, installed by .ci/run) is on the PATH. */
export const promtoolAvailable = ((): boolean => {
  try {
    execFileSync("promtool", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Put in a test's name when it is skipped for want of promtool, so the run says why. */
export const promtoolSkipReason = promtoolAvailable ? "" : " (skipped: promtool is not installed; `bash .ci/run` installs Debian's `prometheus`)"

/** `promtool check metrics` over `text` (Prometheus' own parser and linter): exit code and everything it said. */
export const promtoolCheck = (text: string) =>
  Effect.async<{ readonly code: number | null; readonly output: string }>((resume) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.on("error", (e) => resume(Effect.succeed({ code: null, output: String(e) })))
    child.on("close", (code) => resume(Effect.succeed({ code, output })))
    child.stdin.end(text)
  })

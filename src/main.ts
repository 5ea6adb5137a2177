import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlError } from "@effect/sql"
import { Cause, ConfigError, Effect, Exit, Layer, Option, Predicate } from "effect"
import { config as loadDotenv } from "dotenv"
import * as v8 from "node:v8"
import { formatConfigError } from "./config.js"
import { ExitCodes, ExitWith } from "./cli/ExitCode.js"
import { LoggingLive } from "./observability/logging.js"
import { TracingLive } from "./observability/tracing.js"
import { makeRoot } from "./cli/root.js"
import { demoCommand } from "./demo/command.js"
import { isConsumerWorker, runConsumerWorker } from "./cli/consumerWorker.js"

loadDotenv({ quiet: true })

// A sync streams pages through: the live heap stays small and flat, but with V8's default heuristics the heap grows to
// up to 4x the live set after each full collection (a 100,000-row backfill peaked near 290 MB). Growing it by 30%
// instead keeps the peak near the live set (~170 MB) at no measurable CPU cost. A growth factor, not a limit: a run
// that needs more heap (many accounts at once) still gets it. V8 reads this flag at each collection, so setting it
// here takes effect (limits such as --max-old-space-size are fixed when the heap is set up and cannot be set here).
v8.setFlagsFromString("--heap-growing-percent=30")

// serve's event consumer runs this same bundle in a worker thread (see cli/consumerThread.ts)
if (isConsumerWorker()) runConsumerWorker()
else runCli()

function runCli(): void {
  const cli = Command.run(makeRoot({ demo: demoCommand }), { name: "account-sync", version: "0.1.0" })

  let signal: "SIGINT" | "SIGTERM" | undefined
  process.once("SIGINT", () => (signal ??= "SIGINT"))
  process.once("SIGTERM", () => (signal ??= "SIGTERM"))

  /** One line for an expected failure: its message (for a database error, also what the database said). */
  const describeFailure = (error: unknown): string => {
    if (error instanceof SqlError.SqlError) return `database error: ${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}`
    if (error instanceof Error && error.message.length > 0) return error.message
    return Predicate.hasProperty(error, "_tag") ? String(error._tag) : String(error)
  }

  /** Turns how the program ended into an exit code, printing one clear line for expected failures. */
  const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
    if (Exit.isSuccess(exit)) return ExitCodes.ok
    if (Cause.isInterruptedOnly(exit.cause)) return signal === "SIGTERM" ? ExitCodes.sigterm : ExitCodes.sigint
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (error instanceof ExitWith) {
        if (error.message) process.stderr.write(`${error.message}\n`)
        return error.code
      }
      if (ConfigError.isConfigError(error)) {
        process.stderr.write(`${formatConfigError(error)}\n`)
        return ExitCodes.usage
      }
      if (ValidationError.isValidationError(error)) return ExitCodes.usage
      process.stderr.write(`account-sync: ${describeFailure(error)}\n`)
      return ExitCodes.failure
    }
    process.stderr.write(`account-sync: ${Cause.pretty(exit.cause)}\n`)
    return ExitCodes.failure
  }

  (cli(process.argv) as Effect.Effect<void, unknown, NodeContext.NodeContext>).pipe(
    Effect.provide(Layer.merge(LoggingLive, TracingLive)),
    Effect.provide(NodeContext.layer),
    (program) =>
      NodeRuntime.runMain(program, {
        disableErrorReporting: true,
        disablePrettyLogger: true,
        teardown: (exit, onExit) => onExit(signal ? exitCodeOf(exit) || (signal === "SIGTERM" ? 143 : 130) : exitCodeOf(exit))
      })
  )
}

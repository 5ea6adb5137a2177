import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlError } from "@effect/sql"
import { Cause, ConfigError, Effect, Exit, Layer, Option, Predicate } from "effect"
import { config as loadDotenv } from "dotenv"
import { formatConfigError } from "./config.js"
import { isConnectionLost } from "./db/connectionRetry.js"
import { databaseAddress } from "./db/databaseAddress.js"
import { ExitCodes, ExitWith } from "./cli/ExitCode.js"
import { LoggingLive } from "./observability/logging.js"
import { TracingLive } from "./observability/tracing.js"
import { helpFor } from "./cli/help.js"
import { mistyped } from "./cli/didYouMean.js"
import { emptyOptionValue } from "./cli/optionChecks.js"
import { commands, makeRoot } from "./cli/root.js"
import { demoCommand } from "./demo/command.js"
import { isConsumerWorker, runConsumerWorker } from "./serve/consumerWorker.js"

loadDotenv({ quiet: true })

/**
 * `--log-level LEVEL` anywhere before `--` (before or after the command) sets LOG_LEVEL for this run and is taken
 * out of the arguments; `warning` is taken as `warn`, the spelling LOG_LEVEL uses.
 */
function withLogLevelFromFlag(args: ReadonlyArray<string>): ReadonlyArray<string> {
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      out.push(...args.slice(i))
      break
    }
    const value = arg === "--log-level" ? args[++i] : arg.startsWith("--log-level=") ? arg.slice("--log-level=".length) : undefined
    if (value === undefined && arg !== "--log-level") out.push(arg)
    else if (value !== undefined) process.env.LOG_LEVEL = value.toLowerCase() === "warning" ? "warn" : value
  }
  return out
}

// serve's event consumer runs this same bundle in a worker thread (see cli/consumerThread.ts)
if (isConsumerWorker()) runConsumerWorker()
else runCli()

function runCli(): void {
  const version = "0.1.0"
  const extra = { demo: demoCommand }
  const args = withLogLevelFromFlag(process.argv.slice(2))
  // --help of every command (and no command at all) is ours: from each command's options, without boilerplate
  const help = helpFor(args, Object.entries({ ...commands, ...extra }), version, {
    width: Math.min(100, process.stdout.isTTY ? process.stdout.columns || 100 : 100),
    colors: process.stdout.isTTY === true && process.env.NO_COLOR === undefined
  })
  if (help !== undefined) {
    process.stdout.write(`${help}\n`)
    return
  }
  const empty = emptyOptionValue(args) ?? mistyped(args, Object.entries({ ...commands, ...extra }))
  if (empty !== undefined) {
    process.stderr.write(`${empty.message}\n`)
    process.exitCode = empty.code
    return
  }
  const cli = Command.run(makeRoot(extra), { name: "account-sync", version })

  let signal: "SIGINT" | "SIGTERM" | undefined
  process.once("SIGINT", () => (signal ??= "SIGINT"))
  process.once("SIGTERM", () => (signal ??= "SIGTERM"))

  /** One line for an expected failure: its message (for a database error, also what the database said). */
  const describeFailure = (error: unknown): string => {
    if (error instanceof SqlError.SqlError) {
      const what = `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}`
      // which database did not answer, by its address (never its password)
      return isConnectionLost(error) ? `${databaseAddress(process.env.DATABASE_URL, process.env.DATA_DIR ?? "./.data")} does not answer: ${what}` : `database error: ${what}`
    }
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
      // another process has the embedded database open: the configuration (DATA_DIR) is what to change
      if (Predicate.isTagged(error, "DataDirInUse")) {
        process.stderr.write(`account-sync: ${describeFailure(error)}\n`)
        return ExitCodes.usage
      }
      process.stderr.write(`account-sync: ${describeFailure(error)}\n`)
      return ExitCodes.failure
    }
    process.stderr.write(`account-sync: ${Cause.pretty(exit.cause)}\n`)
    return ExitCodes.failure
  }

  (cli([...process.argv.slice(0, 2), ...args]) as Effect.Effect<void, unknown, NodeContext.NodeContext>).pipe(
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

import { Config, Effect, Layer, Option } from "effect"
import { ProgressLog } from "../../run/Progress.js"

const inCi = () => {
  const ci = process.env.CI
  return ci !== undefined && ci !== "" && ci !== "0" && ci !== "false"
}

/**
 * The live display when both stdout and stderr are a terminal (outside CI, and unless LOG_FORMAT asks for
 * structured logs); otherwise log lines: one per stream when it ends, page-level ones at debug.
 *
 * The display's module (ink, and yoga-layout's WebAssembly under it) is loaded only then: compiled at every start, its
 * WebAssembly was still compiling in the background when a command failed at once (a DATA_DIR in use), and the
 * process hung in its exit waiting for that compilation (seen on the loaded CI machine: sleeping on a futex, three
 * threads left, for minutes).
 */
export const ProgressAuto = Layer.unwrapEffect(
  Effect.gen(function* () {
    const format = yield* Config.option(Config.string("LOG_FORMAT")).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    const structured = Option.isSome(format) && format.value !== "pretty"
    if (!(process.stdout.isTTY && process.stderr.isTTY && !inCi() && !structured)) return ProgressLog
    return (yield* Effect.promise(() => import("./ProgressTerminal.js"))).ProgressTerminal
  })
)

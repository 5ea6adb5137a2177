import { Config, Effect, Layer, Logger, LogLevel, Option } from "effect"

/**
 * Logs go to stderr: pretty on a terminal, JSON lines otherwise; `LOG_FORMAT` (pretty|json|logfmt) overrides,
 * `LOG_LEVEL` (all|trace|debug|info|warn|error|fatal|none) sets the minimum level.
 */
export const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const format = yield* Config.option(Config.literal("pretty", "json", "logfmt")("LOG_FORMAT"))
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const chosen = Option.getOrElse(format, () => (process.stderr.isTTY ? "pretty" : "json"))
    const base =
      chosen === "pretty" ? Logger.prettyLogger({ stderr: true }) : chosen === "json" ? Logger.jsonLogger : Logger.logfmtLogger
    const logger = chosen === "pretty" ? base : Logger.withConsoleError(base as Logger.Logger<unknown, string>)
    return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(level))
  })
)

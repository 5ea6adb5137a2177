import { Array as Arr, Cause, Config, Effect, HashMap, Inspectable, Layer, List, Logger, LogLevel, Option } from "effect"
import { printable } from "./printable.js"

/** Text from outside (an account's name, the service's error message, an id from a delivery) made inert, never cut. */
const inert = (text: string) => printable(text, Number.POSITIVE_INFINITY)

const textOf = (value: unknown) => (typeof value === "string" ? value : Inspectable.toStringUnknown(value, 0))

const levelColor: Partial<Record<LogLevel.LogLevel["_tag"], string>> = { Fatal: "\x1b[31m", Error: "\x1b[31m", Warning: "\x1b[33m", Info: "\x1b[32m", Debug: "\x1b[2m", Trace: "\x1b[2m" }

/** Annotations a person reading a terminal does not need on every line. */
const quiet = new Set(["runId"])

/**
 * One line a log, for a person at a terminal: `12:03:04 INFO message  stream=jobs accountId=...`, a failure's cause
 * indented below it. Every piece is escaped here (`\u001b` shown, not obeyed), and it writes through the console at
 * the moment it logs, so a live display above which it prints (ink) sees it.
 */
export const terminalLogger = (colors: boolean) =>
  Logger.make<unknown, void>(({ annotations, cause, date, logLevel, message, spans }) => {
    const time = date.toTimeString().slice(0, 8)
    const level = colors ? `${levelColor[logLevel._tag] ?? ""}${logLevel.label}\x1b[0m` : logLevel.label
    const text = inert(Arr.ensure(message).map(textOf).join(" "))
    const notes = [
      ...HashMap.toEntries(annotations)
        // an annotation the message already says (the account id of "connected <name> (<id>)") is said once
        .filter(([key, value]) => !quiet.has(key) && !(typeof value === "string" && text.includes(inert(value))))
        .map(([key, value]) => `${key}=${inert(textOf(value))}`),
      ...List.toArray(spans).map((span) => `${span.label}=${date.getTime() - span.startTime}ms`)
    ]
    const dim = (s: string) => (colors ? `\x1b[2m${s}\x1b[0m` : s)
    const lines = [`${dim(time)} ${level} ${text}${notes.length > 0 ? `  ${dim(notes.join(" "))}` : ""}`]
    if (!Cause.isEmpty(cause)) lines.push(...Cause.pretty(cause).split("\n").map((l) => `  ${inert(l)}`))
    globalThis.console.error(lines.join("\n"))
  })

/** A structured logger's line with what JSON and logfmt leave raw (C1 controls, bidi overrides) escaped too. */
const escaping = (logger: Logger.Logger<unknown, string>) => Logger.withConsoleError(Logger.map(logger, inert))

/** The logger of a format: every one escapes text from outside before it reaches stderr. */
export const loggerFor = (format: "pretty" | "json" | "logfmt", colors: boolean): Logger.Logger<unknown, void> =>
  format === "pretty" ? terminalLogger(colors) : escaping(format === "json" ? Logger.jsonLogger : Logger.logfmtLogger)

/**
 * Logs go to stderr: one line a log on a terminal, JSON lines otherwise; `LOG_FORMAT` (pretty|json|logfmt) overrides,
 * `LOG_LEVEL` (all|trace|debug|info|warn|error|fatal|off) sets the minimum level.
 */
export const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const format = yield* Config.option(Config.literal("pretty", "json", "logfmt")("LOG_FORMAT"))
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const chosen = Option.getOrElse(format, () => (process.stderr.isTTY ? "pretty" : "json"))
    const logger = loggerFor(chosen, process.stderr.isTTY === true && process.env.NO_COLOR === undefined)
    return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(level))
  })
)

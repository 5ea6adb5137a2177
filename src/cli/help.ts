import { CliConfig, Command, type HelpDoc, Options } from "@effect/cli"
import type { Span } from "@effect/cli/HelpDoc/Span"
import { wrap } from "./output/text.js"

/**
 * `--help` of every command, written from the command's own options (so it cannot drift from them) without
 * @effect/cli's boilerplate: a one-line purpose, the usage with the program's name and optional options in brackets,
 * each option with its description and real default, an example; colour only on a terminal.
 */

/** What a command says about itself beyond its options. */
export interface CommandHelp {
  /** One line: what the command is for. */
  readonly purpose: string
  /** More, when one line is not enough (a paragraph). */
  readonly details?: string
  /** Command lines as a person would type them, e.g. `account-sync sync --stream jobs`. */
  readonly examples: ReadonlyArray<string>
  /** Its subcommands by name (`webhooks subscribe`), for their help. */
  readonly subcommands?: ReadonlyArray<readonly [string, Command.Command<any, any, any, any>]>
}

const registry = new WeakMap<object, CommandHelp>()

/** A command with its help: the purpose becomes its description (what @effect/cli shows elsewhere). */
export const withHelp = <C extends Command.Command<any, any, any, any>>(command: C, help: CommandHelp): C => {
  const described = Command.withDescription(command, help.details ? `${help.purpose} ${help.details}` : help.purpose) as C
  registry.set(described, help)
  return described
}

export const helpOf = (command: Command.Command<any, any, any, any>): CommandHelp | undefined => registry.get(command)

/**
 * `Options.withDefault(value)` with the default said in the option's help (@effect/cli says only "optional" for a
 * plain default value).
 */
export const withShownDefault =
  <A>(value: A, shown: string = String(value)) =>
  (self: Options.Options<A>): Options.Options<A> =>
    self.pipe(Options.withDefault(value), Options.withDescription(`(default: ${shown})`))

/** Options every command gets from @effect/cli; the program's help lists the ones that matter once. */
const builtIn = /^(--completions|--log-level|\(-h, --help\)|--wizard|--version)(\s|$)/

interface Entry {
  /** `--account ID`, `<sql>`. */
  readonly name: string
  readonly description: string
  readonly repeatable: boolean
  readonly optional: boolean
  readonly default?: string
  /** What @effect/cli says the value is ("An integer.", "A user-defined piece of text."). */
  readonly valueType: string
}

interface Parsed {
  readonly options: ReadonlyArray<Entry>
  readonly args: ReadonlyArray<Entry>
}

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> => (doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : [doc])

const repeated = /^This (option|argument) may be repeated/
const optional = /^This setting is optional\.(?: Defaults to: (.*))?$/

/** An option's or argument's entry from @effect/cli's description of it (its first paragraph is the value's type). */
const entryOf = (span: Span, block: HelpDoc.HelpDoc, kind: "option" | "arg"): Entry => {
  const all = flatten(block).flatMap((d) => (d._tag === "Paragraph" ? [spanText(d.value)] : []))
  const paragraphs = all.slice(1)
  const name = spanText(span).replace(/\.\.\.$/, "").trim()
  const fallback = paragraphs.map((p) => optional.exec(p)).find((m) => m !== null)
  const isFlag = kind === "option" && !name.includes(" ")
  const value = fallback?.[1]
  return {
    name,
    description: paragraphs.filter((p) => !repeated.test(p) && !optional.test(p)).join(" "),
    repeatable: paragraphs.some((p) => repeated.test(p)),
    optional: fallback !== undefined || paragraphs.some((p) => repeated.test(p)) || isFlag,
    valueType: all[0] ?? "",
    ...(value !== undefined && !isFlag && value !== "false" ? { default: value } : {})
  }
}

/** The options and arguments of a command, as its HelpDoc lists them. */
const parse = (command: Command.Command<any, any, any, any>): Parsed => {
  const options: Array<Entry> = []
  const args: Array<Entry> = []
  let section = ""
  for (const doc of flatten(Command.getHelp(command, CliConfig.defaultConfig))) {
    if (doc._tag === "Header") section = spanText(doc.value)
    else if (doc._tag === "DescriptionList" && (section === "OPTIONS" || section === "ARGUMENTS")) {
      for (const [span, block] of doc.definitions) {
        if (section === "OPTIONS" && builtIn.test(spanText(span))) continue
        if (section === "OPTIONS") options.push(entryOf(span, block, "option"))
        else args.push(entryOf(span, block, "arg"))
      }
    }
  }
  return { options, args }
}

/** The long option names a command takes (`--account`), its own and the ones every command gets. */
export const optionNamesOf = (command: Command.Command<any, any, any, any>): ReadonlyArray<string> => [
  ...parse(command).options.flatMap((o) => o.name.split(/[\s,()]+/).filter((w) => w.startsWith("--"))),
  "--help",
  "--log-level",
  "--completions",
  "--wizard",
  "--version"
]

/** The options of a command whose value is a whole number, with the value's name (`--timeout` → `SECONDS`). */
export const integerOptionsOf = (command: Command.Command<any, any, any, any>): ReadonlyMap<string, string> =>
  new Map(
    parse(command).options.flatMap((o) => {
      const [flag, value] = o.name.split(/\s+/)
      return o.valueType === "An integer." && flag !== undefined && flag.startsWith("--") ? [[flag, value ?? "N"] as const] : []
    })
  )

const usageOf = (entry: Entry, kind: "option" | "arg") => {
  const name = kind === "arg" ? `<${entry.name.replace(/^<|>$/g, "")}>` : entry.name
  return `${entry.optional ? `[${name}]` : name}${entry.repeatable ? "..." : ""}`
}

export interface HelpStyle {
  readonly width: number
  readonly colors: boolean
}

const heading = (text: string, style: HelpStyle) => (style.colors ? `\x1b[1m${text}\x1b[0m` : text)

/** The help of one command: `path` is how it is typed (`account-sync webhooks subscribe`). */
export const commandHelp = (command: Command.Command<any, any, any, any>, path: string, style: HelpStyle): string => {
  const help = helpOf(command)
  const { options, args } = parse(command)
  const column = Math.min(28, Math.max(...options.map((o) => o.name.length), ...args.map((a) => a.name.length + 2), 8) + 2)
  const describe = (name: string, text: string) =>
    `  ${name.padEnd(column)}${name.length > column - 2 ? `\n  ${" ".repeat(column)}` : ""}${wrap(text, style.width, column + 2)}`
  const subcommands = help?.subcommands ?? []
  return [
    wrap(`${path}: ${help?.purpose ?? "(no description)"}`, style.width, 0),
    ...(help?.details ? ["", wrap(help.details, style.width, 0)] : []),
    "",
    heading("USAGE", style),
    `  ${wrap([path, ...(subcommands.length > 0 ? ["<command>"] : []), ...options.map((o) => usageOf(o, "option")), ...args.map((a) => usageOf(a, "arg"))].join(" "), style.width, 6)}`,
    ...(subcommands.length > 0
      ? ["", heading("COMMANDS", style), ...subcommands.map(([name, sub]) => describe(name, helpOf(sub)?.purpose ?? ""))]
      : []),
    ...(args.length > 0 ? ["", heading("ARGUMENTS", style), ...args.map((a) => describe(`<${a.name.replace(/^<|>$/g, "")}>`, a.description))] : []),
    ...(options.length > 0
      ? [
          "",
          heading("OPTIONS", style),
          ...options.map((o) =>
            describe(o.name, `${o.description}${o.repeatable && !/repeatable/.test(o.description) ? " (repeatable)" : ""}${o.default !== undefined && !/default/i.test(o.description) ? ` (default: ${o.default})` : ""}`)
          )
        ]
      : []),
    ...(help && help.examples.length > 0 ? ["", heading(help.examples.length === 1 ? "EXAMPLE" : "EXAMPLES", style), ...help.examples.map((e) => `  ${exampleLines(e, style.width)}`)] : [])
  ].join("\n")
}

/**
 * A command line too long for the width, broken between words with the shell's line continuation (` \\`), so it
 * can still be copied and run as it is shown.
 */
const exampleLines = (example: string, width: number): string => {
  if (2 + example.length <= width) return example
  const lines: Array<string> = []
  let line = ""
  for (const word of example.split(" ")) {
    if (line.length > 0 && 4 + line.length + 1 + word.length + 2 > width) {
      lines.push(`${line} \\`)
      line = word
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join("\n    ")
}

/** The program's help: every command with its purpose, and where settings go. */
export const programHelp = (commands: ReadonlyArray<readonly [string, Command.Command<any, any, any, any>]>, version: string, style: HelpStyle): string => {
  const width = Math.max(...commands.map(([name]) => name.length)) + 2
  return [
    `account-sync ${version}: copies the accounts of a GraphQL business-management service into Postgres.`,
    "",
    heading("USAGE", style),
    "  account-sync <command> [options]",
    "",
    heading("COMMANDS", style),
    ...commands.map(([name, command]) => `  ${name.padEnd(width)}${wrap(helpOf(command)?.purpose ?? "", style.width, width + 2)}`),
    "",
    heading("GLOBAL OPTIONS", style),
    ...[
      ["--log-level LEVEL", "all, trace, debug, info, warn, error, fatal or off (default: LOG_LEVEL, else info)"],
      ["--help, -h", "this help; `account-sync <command> --help` for a command's options and an example"],
      ["--version", "the program's version"]
    ].map(([name, text]) => `  ${name!.padEnd(20)}${wrap(text!, style.width, 22)}`),
    "",
    wrap("Settings come from the environment or a .env file in the working directory: every key is explained in config/.env.example. Exit codes: 0 done, 1 a failure, 2 bad usage or configuration, 3 an account needs reconnecting, 4 the service replaced the pinned API version (SERVICE_GRAPHQL_VERSION), 130 and 143 stopped by Ctrl-C (SIGINT) and SIGTERM.", style.width, 0)
  ].join("\n")
}

type Named = ReadonlyArray<readonly [string, Command.Command<any, any, any, any>]>

/**
 * The help `args` (the words after the program's name) ask for, when they do: no words, or `--help`/`-h` before any
 * `--`. The command is found by the leading words that name commands (`webhooks subscribe --help`).
 */
export const helpFor = (args: ReadonlyArray<string>, commands: Named, version: string, style: HelpStyle): string | undefined => {
  const end = args.indexOf("--")
  const words = end < 0 ? args : args.slice(0, end)
  if (words.length > 0 && !words.includes("--help") && !words.includes("-h")) return undefined
  let level = commands
  let found: { readonly path: string; readonly command: Command.Command<any, any, any, any> } | undefined
  for (const word of words) {
    const next = level.find(([name]) => name === word)
    if (next === undefined) break
    found = { path: `${found?.path ?? "account-sync"} ${word}`, command: next[1] }
    level = helpOf(next[1])?.subcommands ?? []
  }
  return found === undefined ? programHelp(commands, version, style) : commandHelp(found.command, found.path, style)
}

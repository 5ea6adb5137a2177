import { AutoCorrect, CliConfig, type Command } from "@effect/cli"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { helpOf, integerOptionsOf, optionNamesOf } from "./help.js"
import { safe } from "./output/text.js"

/** The known word closest to `given` (ignoring case), when it is close enough to be what was meant. */
export const closest = (given: string, known: ReadonlyArray<string>): string | undefined => {
  const lower = given.toLowerCase()
  const exact = known.find((k) => k.toLowerCase() === lower)
  if (exact !== undefined) return exact
  const config = CliConfig.make({ isCaseSensitive: false, autoCorrectLimit: 2 })
  const scored = known.map((k) => [k, AutoCorrect.levensteinDistance(lower, k.toLowerCase(), config)] as const).sort((a, b) => a[1] - b[1])
  const best = scored[0]
  return best !== undefined && best[1] <= Math.min(config.autoCorrectLimit, Math.max(1, Math.floor(given.length / 3))) ? best[0] : undefined
}

/** "; did you mean X?" when one of `known` is close to `given`, else ";" (what follows is the list). */
export const suggestion = (given: string, known: ReadonlyArray<string>): string => {
  const near = closest(given, known)
  return near === undefined ? ";" : `; did you mean ${near}?`
}

/** An option as typed (`--acount` or `--acount=x`): only words that look like options, not values that start with --. */
const optionWord = /^(--[a-z][a-z0-9-]*)(=.*)?$/

/**
 * A command or option of `commands` mistyped, or a whole-number option given something else: one line naming what
 * was typed, what was probably meant or wanted and where the list is (exit 2), said before anything runs; the command
 * line parser would say only "Received unknown argument" or "'abc' is not a integer".
 */
export const mistyped = (args: ReadonlyArray<string>, commands: ReadonlyArray<readonly [string, Command.Command<any, any, any, any>]>): ExitWith | undefined => {
  const words = args.indexOf("--") < 0 ? args : args.slice(0, args.indexOf("--"))
  const name = words[0]
  if (name === undefined || name.startsWith("-")) return undefined
  const command = commands.find(([n]) => n === name)?.[1]
  if (command === undefined) {
    const near = closest(name, commands.map(([n]) => n))
    return near === undefined ? undefined : new ExitWith({ code: ExitCodes.usage, message: safe(`${name}: no such command; did you mean ${near}? (account-sync --help lists them)`) })
  }
  // a subcommand's options are its own (webhooks subscribe, schema check)
  const sub = (helpOf(command)?.subcommands ?? []).find(([n]) => n === words[1])
  const path = sub === undefined ? name : `${name} ${sub[0]}`
  const known = optionNamesOf(sub?.[1] ?? command)
  const integers = integerOptionsOf(sub?.[1] ?? command)
  const rest = words.slice(sub === undefined ? 1 : 2)
  for (const [i, word] of rest.entries()) {
    const match = optionWord.exec(word)
    const flag = match?.[1]
    if (flag === undefined) continue
    if (!known.includes(flag)) {
      return new ExitWith({ code: ExitCodes.usage, message: safe(`${path} ${flag}: no such option${suggestion(flag, known).replace(/;$/, "")} (account-sync ${path} --help lists them)`) })
    }
    const valueName = integers.get(flag)
    const value = match?.[2] !== undefined ? match[2].slice(1) : rest[i + 1]
    // the parser's own words are "'abc' is not a integer", naming neither the option nor what it wants
    if (valueName !== undefined && value !== undefined && !/^-?\d+$/.test(value.trim())) {
      return new ExitWith({ code: ExitCodes.usage, message: safe(`${path} ${flag} ${value}: expected a whole number (${flag} ${valueName}; account-sync ${path} --help says more)`) })
    }
  }
  return undefined
}

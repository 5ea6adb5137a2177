import { ExitCodes, ExitWith } from "./ExitCode.js"
import { safe } from "./output/text.js"

/** A port given on the command line: 1-65535 (0, any free port, where `allowZero`). Exit 2 with one line otherwise. */
export const checkPort = (flag: string, port: number, options: { readonly allowZero?: boolean } = {}): ExitWith | undefined => {
  const lowest = options.allowZero === true ? 0 : 1
  return Number.isInteger(port) && port >= lowest && port <= 65_535
    ? undefined
    : new ExitWith({ code: ExitCodes.usage, message: `${flag} ${port}: expected a port from ${lowest} to 65535${lowest === 0 ? " (0: any free port)" : ""}` })
}

/** Options whose value names something (an account, a stream, an address): an empty one is never meant. */
const naming = new Set(["--account", "--stream", "--url", "--host", "--data-dir", "--client-id", "--redirect-uri", "--webhook-url"])

/**
 * An option of `naming` given an empty value (`--account ""`), which the command line parser would take as not given
 * at all (and so select every account): bad usage, said before anything runs.
 */
export const emptyOptionValue = (args: ReadonlyArray<string>): ExitWith | undefined => {
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    const arg = args[i]!
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, args[i + 1]]
    if (naming.has(flag) && inline !== undefined && inline.trim().length === 0) {
      return new ExitWith({ code: ExitCodes.usage, message: `${flag}: expected ${flag === "--account" ? "an account id or name" : "a value"}, got an empty value` })
    }
  }
  return undefined
}

/** A URL given on the command line: absolute http(s). */
export const checkHttpUrl = (flag: string, value: string): ExitWith | undefined => {
  try {
    const url = new URL(value)
    if (url.protocol === "http:" || url.protocol === "https:") return undefined
  } catch {
    // not a URL at all
  }
  return new ExitWith({ code: ExitCodes.usage, message: safe(`${flag} ${value}: expected an absolute http(s) URL, e.g. http://127.0.0.1:8080/oauth/callback`) })
}

/** A count or a number of seconds given on the command line: a whole number of at least `least`. */
export const checkAtLeast = (flag: string, value: number, least: number, unit = ""): ExitWith | undefined =>
  Number.isInteger(value) && value >= least
    ? undefined
    : new ExitWith({ code: ExitCodes.usage, message: `${flag} ${value}: expected a whole number${unit} of at least ${least}` })

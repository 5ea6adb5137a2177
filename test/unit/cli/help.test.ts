import { CliConfig, Command, HelpDoc } from "@effect/cli"
import { describe, expect, it } from "@effect/vitest"
import { helpFor, helpOf } from "../../../src/cli/help.js"
import { commands } from "../../../src/cli/root.js"
import { demoCommand } from "../../../src/demo/command.js"

const all = Object.entries({ ...commands, demo: demoCommand })
const style = { width: 100, colors: false }
/** The options a command cannot run without. */
const required = new Set(["grant-reader --role"])
const every: Array<[string, Command.Command<any, any, any, any>]> = all.flatMap(([name, command]) => [
  [name, command] as [string, Command.Command<any, any, any, any>],
  ...(helpOf(command)?.subcommands ?? []).map(([sub, c]) => [`${name} ${sub}`, c] as [string, Command.Command<any, any, any, any>])
])

/** The option names @effect/cli knows for the command (its own help text, built-ins aside). */
const optionNames = (command: Command.Command<any, any, any, any>) =>
  [...HelpDoc.toAnsiText(Command.getHelp(command, CliConfig.defaultConfig)).replace(/\x1b\[[0-9;]*m/g, "").matchAll(/^ {0,4}(--[a-z][a-z-]*)/gm)]
    .map((m) => m[1]!)
    .filter((n) => !["--completions", "--log-level", "--wizard", "--version"].includes(n))

describe("--help", () => {
  it("the program's: every command with a one-line purpose, the global options, where settings go; within 100 columns", () => {
    const text = helpFor(["--help"], all, "0.1.0", style)!
    expect(helpFor([], all, "0.1.0", style)).toBe(text)
    for (const [name] of all) expect(text).toMatch(new RegExp(`^  ${name} +\\S`, "m"))
    expect(text).toContain("--log-level LEVEL")
    expect(text).toContain("config/.env.example")
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100)
    expect(helpFor(["sync", "--account", "x"], all, "0.1.0", style)).toBeUndefined()
  })

  for (const [name, command] of every) {
    it(`${name}: purpose, usage with the program's name and optional options in brackets, every option described, an example, no boilerplate`, () => {
      const text = helpFor([...name.split(" "), "--help"], all, "0.1.0", style)!
      const lines = text.split("\n")
      // the purpose whole, wrapped between words within the width (it ran past the terminal's edge, cut mid-word)
      const title = lines.slice(0, lines.indexOf(""))
      expect(title.join(" ")).toBe(`account-sync ${name}: ${helpOf(command)!.purpose}`)
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100)
      const usage = text.slice(text.indexOf("USAGE\n") + 6, text.indexOf("\n\n", text.indexOf("USAGE\n")))
      expect(usage.trimStart().startsWith(`account-sync ${name}`)).toBe(true)
      for (const option of optionNames(command)) {
        expect(text, option).toMatch(new RegExp(`^  ${option}\\b.*\\S`, "m"))
        // an option that may be left out is shown in brackets, a required one without
        expect(usage, option).toContain(required.has(`${name} ${option}`) ? ` ${option}` : `[${option}`)
      }
      expect(text).toMatch(/\nEXAMPLES?\n {2}(account-sync|npm run) /)
      expect(text).not.toMatch(/A user-defined piece of text|A true or false value|This setting is optional|may be repeated zero or more|An integer\./)
      expect(text).not.toMatch(/\x1b\[/)
    })
  }

  it("defaults are said: the emulator's port, client id and redirect URI, the demo's jobs and data directory, connect's timeout", () => {
    const help = (words: Array<string>) => helpFor([...words, "--help"], all, "0.1.0", style)!
    expect(help(["emulator"])).toMatch(/--port PORT +.*\(default: 4010\)/)
    expect(help(["emulator"])).toContain("(default: emulator-client)")
    expect(help(["emulator"])).toContain("(default: http://127.0.0.1:8080/oauth/callback)")
    expect(help(["demo"])).toContain("(default: 500)")
    expect(help(["demo"])).toContain("(default: ./.data/demo)")
    expect(help(["connect"])).toMatch(/--timeout SECONDS +.*\(default: 600/)
  })
})

import { CliConfig, Command, HelpDoc } from "@effect/cli"
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { commands as cliCommands } from "../../../src/cli/root.js"
import { demoCommand } from "../../../src/demo/command.js"
import { exampleQueries, lookAgain } from "../../../src/demo/Demo.js"

const commands = { ...cliCommands, demo: demoCommand }

const rootDir = path.resolve(import.meta.dirname, "../../..")
const readme = fs.readFileSync(path.join(rootDir, "README.md"), "utf8")
/** The README and the documents it links in docs/: every command they show must exist. */
const documents = [readme, ...fs.readdirSync(path.join(rootDir, "docs")).filter((f) => f.endsWith(".md")).map((f) => fs.readFileSync(path.join(rootDir, "docs", f), "utf8"))].join("\n")
const emulatorDoc = fs.readFileSync(path.join(rootDir, "docs/emulator.md"), "utf8")
const pkg = JSON.parse(fs.readFileSync(path.join(rootDir, "package.json"), "utf8")) as { scripts: Record<string, string> }

const helpText = (command: Command.Command<string, any, any, any>) =>
  HelpDoc.toAnsiText(Command.getHelp(command, CliConfig.defaultConfig)).replace(/\x1b\[[0-9;]*m/g, "")

/** `account-sync <sub> ...` invocations in the README and docs/ (code, tables and prose), with the flags each one uses. */
const invocations = [...documents.matchAll(/(?:`|npx )account-sync ([a-z][a-z-]*)((?: +(?:--[a-z-]+|[A-Z_]+|\[[^\]]*\]|\.\.\.|\/|`[^`]*`|"[^"]*"|[A-Za-z0-9_./:=-]+))*)/g)].map(
  (m) => ({ sub: m[1]!, flags: [...(m[2] ?? "").matchAll(/--[a-z][a-z-]*/g)].map((f) => f[0]) })
)

describe("README", () => {
  it("its first lines give the demo and test commands, and they are npm scripts", () => {
    const head = readme.split("\n").slice(0, 20).join("\n")
    expect(head).toContain("npm ci && npm run demo")
    expect(head).toContain("npm test")
    expect(pkg.scripts.demo).toMatch(/account-sync\.mjs demo$/)
    expect(pkg.scripts.test).toBe("vitest run")
    expect(pkg.scripts.bench).toBeTypeOf("string")
    expect(pkg.scripts.chaos).toBeTypeOf("string")
  })

  it("shows the queries the demo runs, as the demo runs them, and the commands the demo's last lines suggest", () => {
    for (const query of exampleQueries) expect(readme).toContain(query.sql)
    expect(readme).toContain(`npx account-sync query "${lookAgain}"`)
    expect(readme).toContain("export DATA_DIR=./.data/demo DB_SCHEMA=account_sync_demo\nnpx account-sync status")
  })

  it("every `account-sync <command> --flag` it and docs/ show exists in the CLI", () => {
    expect(invocations.length).toBeGreaterThan(10)
    for (const { sub, flags } of invocations) {
      const command = (commands as Record<string, Command.Command<string, any, any, any>>)[sub]
      expect(command, `README uses unknown command \`account-sync ${sub}\``).toBeDefined()
      const help = helpText(command!)
      for (const flag of flags) expect(help, `README: \`account-sync ${sub} ${flag}\` is not an option of ${sub}`).toContain(flag)
    }
  })

  it("docs/emulator.md's walkthrough runs as written and ends with data", async () => {
    const block = /```sh\n(npx account-sync emulator --port 4010[\s\S]*?)```/.exec(emulatorDoc)?.[1]
    expect(block).toBeDefined()
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo
        server.close(() => resolve(port))
      })
    })
    const script = `set -euo pipefail\n${block!.replaceAll("4010", String(port))}`
    // its own process group, so the emulator it starts in the background is stopped with it
    const child = spawn("bash", ["-c", script], { cwd: rootDir, detached: true, env: { ...process.env, LOG_LEVEL: "warn" } })
    let output = ""
    let errors = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (errors += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      process.kill(-child.pid!, "SIGTERM")
    } catch {}
    expect(code, errors).toBe(0)
    const answer = JSON.parse(output.trim().split("\n").at(-1)!)
    expect(answer.data.account.id).toBeTypeOf("string")
    expect(answer.data.jobs.nodes).toHaveLength(2)
    expect(answer.extensions.cost.requestedQueryCost).toBeGreaterThan(0)
  }, 120_000)
})


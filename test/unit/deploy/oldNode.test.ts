import { describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../../..")

/** A node older than 24 on this machine (its own /usr/bin/node, or another on the PATH), or undefined. */
const oldNode = ((): { readonly path: string; readonly version: string } | undefined => {
  const onPath = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n").filter((line) => line !== "")
  for (const candidate of [...new Set(["/usr/bin/node", "/usr/local/bin/node", ...onPath])]) {
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim()
      if (Number(version.replace(/^v/, "").split(".")[0]) < 24) return { path: candidate, version }
    } catch {
      // not there, or not a node
    }
  }
  return undefined
})()

/** What the check prints on this machine: its platform decides the one command that gets Node 24. */
const expectedLine = (version: string): string => {
  const pkg = `node-${process.platform}-${process.arch}`
  const get =
    process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")
      ? `npm install --prefix ~/.node24 ${pkg}@24 && export PATH=~/.node24/node_modules/${pkg}/bin:$PATH`
      : process.platform === "darwin"
        ? `brew install node@24 && export PATH="$(brew --prefix node@24)/bin:$PATH"`
        : "see https://nodejs.org/en/download"
  return `account-sync needs Node 24 or later (this is Node ${version}); get it: ${get}\n`
}

describe.skipIf(oldNode === undefined)(`an older Node (${oldNode?.version ?? "none on this machine"})`, () => {
  const old = oldNode!
  const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
    spawnSync(command, [...args], {
      cwd,
      encoding: "utf8",
      timeout: 60_000,
      env: { PATH: `${path.dirname(old.path)}:${process.env.PATH ?? ""}`, HOME: process.env.HOME ?? "/tmp" }
    })

  it("bin/account-sync.mjs stops before it loads anything: one line naming Node 24 and the command that gets it, exit 2", () => {
    // bin's two files alone, without the bundle's builder beside them: loading anything more would fail otherwise
    const alone = fs.mkdtempSync(path.join(os.tmpdir(), "old-node-"))
    try {
      for (const file of ["account-sync.mjs", "node-check.mjs"]) fs.copyFileSync(path.join(root, "bin", file), path.join(alone, file))
      for (const args of [["--version"], ["sync"], ["demo"]]) {
        const result = run(old.path, [path.join(alone, "account-sync.mjs"), ...args], alone)
        expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }, args.join(" ")).toEqual({
          status: 2,
          stdout: "",
          stderr: expectedLine(old.version)
        })
      }
      // on this Node the check lets it through, to the missing bundle builder
      const current = spawnSync(process.execPath, [path.join(alone, "account-sync.mjs"), "--version"], { encoding: "utf8", timeout: 60_000 })
      expect(current.status).toBe(1)
      expect(current.stderr).toContain("bundle.mjs")
    } finally {
      fs.rmSync(alone, { recursive: true, force: true })
    }
  })

  it("npm run demo and npm test's first step stop with the same line; npm ci refuses at once (engine-strict)", () => {
    // --help: were the check to let it through, a quick answer rather than the whole demo on the old Node
    const demo = run("npm", ["run", "demo", "--", "--help"], root)
    expect(demo.status).toBe(2)
    expect(demo.stderr).toBe(expectedLine(old.version))
    const pretest = run("npm", ["run", "pretest"], root)
    expect(pretest.status).toBe(2)
    expect(pretest.stderr).toBe(expectedLine(old.version))
    // --dry-run: the same engine check, without touching node_modules
    const ci = run("npm", ["ci", "--dry-run", "--no-audit", "--no-fund"], root)
    expect(ci.status).not.toBe(0)
    expect(ci.stderr).toContain("EBADENGINE")
    expect(ci.stderr).toContain(`Required: {"node":">=24"}`)
  })
})

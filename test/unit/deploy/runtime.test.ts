import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { nodeArgs, nodeEnv } from "../../../bench/lib/emulatorProcess.js"

const root = path.resolve(import.meta.dirname, "../../..")
const major = (version: string) => Number(version.replace(/^v/, "").split(".")[0])

describe("runtime: Node 24 LTS", () => {
  it("the suite itself runs on Node 24 or later (.ci/run installs it when the machine's node is older)", () => {
    expect(major(process.version)).toBeGreaterThanOrEqual(24)
  })

  it("package.json's engines and every stage of the Dockerfile ask for Node 24", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { engines: { node: string } }
    expect(pkg.engines.node).toBe(">=24")
    const stages = [...fs.readFileSync(path.join(root, "Dockerfile"), "utf8").matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!)
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const image of stages) expect(image).toMatch(/^node:24-/)
  })

  it("an older Node is refused where the README's commands start: npm ci (engine-strict), npm test (pretest) and bin, all by the same number", () => {
    expect(fs.readFileSync(path.join(root, ".npmrc"), "utf8").split("\n")).toContain("engine-strict=true")
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    expect(pkg.scripts.pretest).toBe("node bin/node-check.mjs")
    expect(fs.readFileSync(path.join(root, "bin", "node-check.mjs"), "utf8")).toContain("const needed = 24\n")
    expect(fs.readFileSync(path.join(root, "bin", "account-sync.mjs"), "utf8")).toMatch(/\nimport "\.\/node-check\.mjs"\n[^]*await import\("\.\/bundle\.mjs"\)/)
  })

  it("the program starts with its young generation capped, two V8 platform threads, its heap grown by 30% a collection, two malloc arenas and a fixed mmap threshold wherever it ships: bin's shebang, the Dockerfile, npm run demo, the bench's children", () => {
    const flags = ["--max-semi-space-size=8", "--v8-pool-size=2", "--heap-growing-percent=30"]
    const malloc = "MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072"
    expect(fs.readFileSync(path.join(root, "bin", "account-sync.mjs"), "utf8").split("\n")[0]).toBe(`#!/usr/bin/env -S ${malloc} node ${flags.join(" ")}`)
    const dockerfile = fs.readFileSync(path.join(root, "Dockerfile"), "utf8")
    expect(dockerfile).toContain(`ENTRYPOINT ["node", ${flags.map((f) => `"${f}"`).join(", ")}, "/app/bin/account-sync.mjs"]`)
    expect(dockerfile).toContain(`ENV ${malloc}\n`)
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    expect(pkg.scripts.demo).toBe(`${malloc} node ${flags.join(" ")} bin/account-sync.mjs demo`)
    expect(nodeArgs).toEqual(flags)
    expect(nodeEnv).toEqual({ MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072" })
  })
})

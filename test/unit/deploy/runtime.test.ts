import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"

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
})

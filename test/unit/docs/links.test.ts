import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../../..")
const documents = ["README.md", ...fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to dashes. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-")

const headings = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)))

describe("the README and docs/", () => {
  for (const file of documents) {
    it(`${file}: every link points at a file or heading inside the repository`, () => {
      const text = fs.readFileSync(path.join(root, file), "utf8")
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
      expect(links.length).toBeGreaterThan(0)
      for (const link of links) {
        expect(link, `${file}: ${link} leaves the repository`).not.toMatch(/^[a-z]+:/i)
        const [target, hash] = link.split("#") as [string, string | undefined]
        const resolved = target === "" ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), target)
        expect(path.relative(root, resolved).startsWith(".."), `${file}: ${link} points outside the repository`).toBe(false)
        expect(fs.existsSync(resolved), `${file}: ${link} does not exist`).toBe(true)
        if (hash !== undefined && resolved.endsWith(".md")) {
          expect(headings(fs.readFileSync(resolved, "utf8")), `${file}: ${link} names no heading`).toContain(hash)
        }
      }
    })
  }

  it("the README stays a first read: the two commands first, the long parts in docs/", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const head = readme.split("\n").slice(0, 12).join("\n")
    expect(head).toContain("npm ci && npm run demo")
    expect(head).toContain("npm test")
    for (const moved of ["Performance", "Security", "Runbook", "Module map"]) expect(readme).not.toMatch(new RegExp(`^#+ ${moved}`, "m"))
    expect(readme).toContain("```mermaid\nerDiagram")
  })
})

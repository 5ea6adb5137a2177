import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { generatedDocs } from "../../../scripts/lib/generatedDocs.js"
import { allStreams } from "../../../src/sync/streams/index.js"
import { tablesOf } from "../../../src/sync/streams/Stream.js"

const root = path.resolve(import.meta.dirname, "../../..")

describe("documents generated from the stream definitions", () => {
  for (const [file, expected] of Object.entries(generatedDocs(root))) {
    it(`${file} is current (regenerate with \`npm run docs\`)`, () => {
      expect(fs.readFileSync(path.join(root, file), "utf8")).toBe(expected)
    })
  }

  it("the dbt sources name every stream and child table with every column, keys as tests, freshness on synced_at", () => {
    const sources = parse(fs.readFileSync(path.join(root, "config/dbt/sources.yml"), "utf8")) as {
      sources: Array<{ loaded_at_field: string; freshness: unknown; tables: Array<{ name: string; columns?: Array<{ name: string }>; tests?: Array<unknown> }> }>
    }
    const source = sources.sources[0]!
    expect(source.loaded_at_field).toBe("synced_at")
    expect(source.freshness).toBeDefined()
    const byName = new Map(source.tables.map((t) => [t.name, t]))
    for (const stream of allStreams) {
      for (const table of tablesOf(stream)) {
        const entry = byName.get(table)
        expect(entry, table).toBeDefined()
        const columns = entry!.columns!.map((c) => c.name)
        const own = table === stream.table ? stream.columns : stream.children.find((c) => c.table === table)!.columns
        for (const c of own) expect(columns, `${table}.${c.column}`).toContain(c.column)
        expect(columns).toEqual(expect.arrayContaining(["account_id", "id", "raw", "synced_at", "deleted_at"]))
        expect(JSON.stringify(entry!.tests)).toContain("unique")
      }
    }
  })
})

import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { nextMigration, streamTablesDdl } from "../../../scripts/stream-ddl.js"
import { streamNamed } from "../../../src/sync/streams/index.js"

describe("scripts/stream-ddl.ts", () => {
  it("--write names the next migration after the highest number in sql/", () => {
    expect(nextMigration(["001_connections.sql", "010_token_keys.sql", "009_x.sql", "README.md"], ["quotes"])).toBe("011_quotes.sql")
    expect(nextMigration([], ["a", "b"])).toBe("001_a_b.sql")
    const files = fs.readdirSync(path.resolve(import.meta.dirname, "../../../sql"))
    expect(files).not.toContain(nextMigration(files, ["quotes"]))
  })

  it("drafts a stream's own table and its children's, with every column and the schema's comments", () => {
    const quotes = streamNamed("quotes")
    const ddl = streamTablesDdl(quotes)
    for (const table of [quotes.table, ...quotes.children.map((c) => c.table)]) expect(ddl).toContain(`CREATE TABLE ${table} (`)
    for (const c of quotes.columns) expect(ddl).toMatch(new RegExp(`\\n  ${c.column} ${c.type},`))
    expect(ddl).toContain("PRIMARY KEY (account_id, id)")
    expect(ddl).toContain("COMMENT ON TABLE quotes IS")
    // and the history table of each (SYNC_HISTORY)
    for (const table of [quotes.table, ...quotes.children.map((c) => c.table)]) expect(ddl).toContain(`SELECT history_install('${table}');`)
  })
})

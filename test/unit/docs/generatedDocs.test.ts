import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { generatedDocs } from "../../../scripts/lib/generatedDocs.js"
import { ConfigProvider, Duration, Effect } from "effect"
import { allStreams } from "../../../src/sync/streams/index.js"
import { staleAfter, SyncSettingsConfig } from "../../../src/sync/SyncSettings.js"
import { tablesOf } from "../../../src/sync/streams/Stream.js"

const root = path.resolve(import.meta.dirname, "../../..")

describe("documents generated from the stream definitions", () => {
  for (const [file, expected] of Object.entries(generatedDocs(root))) {
    it(`${file} is current (regenerate with \`npm run docs\`)`, () => {
      expect(fs.readFileSync(path.join(root, file), "utf8")).toBe(expected)
    })
  }

  it("the dbt sources name every stream and child table with every column, keys as tests, and no freshness on synced_at", () => {
    const sources = parse(fs.readFileSync(path.join(root, "config/dbt/models/sources.yml"), "utf8")) as {
      sources: Array<{ loaded_at_field: string; freshness: unknown; tables: Array<{ name: string; columns?: Array<{ name: string }>; data_tests?: Array<unknown> }> }>
    }
    const source = sources.sources[0]!
    // synced_at moves only when a row changes: a quiet account's table would look stale by it
    expect(source.loaded_at_field).toBeUndefined()
    expect(source.freshness).toBeUndefined()
    const byName = new Map(source.tables.map((t) => [t.name, t]))
    for (const stream of allStreams) {
      for (const table of tablesOf(stream)) {
        const entry = byName.get(table)
        expect(entry, table).toBeDefined()
        const columns = entry!.columns!.map((c) => c.name)
        const own = table === stream.table ? stream.columns : stream.children.find((c) => c.table === table)!.columns
        for (const c of own) expect(columns, `${table}.${c.column}`).toContain(c.column)
        expect(columns).toEqual(expect.arrayContaining(["account_id", "id", "raw", "synced_at", "deleted_at"]))
        expect(JSON.stringify(entry!.data_tests)).toContain("unique")
      }
    }
  })

  it("each stream's freshness is measured on when its data was last known current (stream_freshness.data_current_at), warning past its cadence plus the margin", () => {
    const sources = parse(fs.readFileSync(path.join(root, "config/dbt/models/sources.yml"), "utf8")) as {
      sources: Array<{
        name: string
        loaded_at_field?: string
        tables: Array<{ name: string; identifier?: string; freshness?: { warn_after: { count: number; period: string }; error_after: { count: number }; filter: string } }>
      }>
    }
    const freshness = sources.sources.find((s) => s.name === "account_sync_freshness")!
    expect(freshness.loaded_at_field).toBe("data_current_at")
    const settings = Effect.runSync(Effect.withConfigProvider(SyncSettingsConfig, ConfigProvider.fromMap(new Map())))
    expect(freshness.tables.map((t) => t.name)).toEqual(allStreams.map((s) => s.name))
    for (const stream of allStreams) {
      const entry = freshness.tables.find((t) => t.name === stream.name)!
      expect(entry.identifier).toBe("stream_freshness")
      expect(entry.freshness!.filter).toBe(`stream = '${stream.name}'`)
      expect(entry.freshness!.warn_after).toEqual({ count: Math.ceil(Duration.toMinutes(staleAfter(settings, stream))), period: "minute" })
      expect(entry.freshness!.error_after.count).toBe(2 * entry.freshness!.warn_after.count)
    }
    // a stream without incremental access waits for its full pass: a day, not the sync schedule
    const minutesOf = (name: string) => freshness.tables.find((t) => t.name === name)!.freshness!.warn_after.count
    expect(minutesOf("users")).toBe(24 * 60 + 60)
    expect(minutesOf("jobs")).toBeLessThan(minutesOf("users"))
  })
})

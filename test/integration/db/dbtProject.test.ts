import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { allStreams } from "../../../src/sync/streams/index.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

const project = path.resolve(import.meta.dirname, "../../../config/dbt")
const models = fs.readdirSync(path.join(project, "models/staging")).filter((f) => f.endsWith(".sql"))
const sources = parse(fs.readFileSync(path.join(project, "models/sources.yml"), "utf8")) as {
  sources: Array<{ name: string; tables: Array<{ name: string }> }>
}

/** A model's SQL as dbt compiles it: each source() becomes the schema-qualified table. */
const compiled = (text: string, schema: string) =>
  text.replace(/\{\{\s*source\('([a-z_]+)',\s*'([a-z_]+)'\)\s*\}\}/g, (_, source: string, table: string) => {
    expect(source).toBe(sources.sources[0]!.name)
    expect(sources.sources[0]!.tables.map((t) => t.name), `source ${table}`).toContain(table)
    return `"${schema}"."${table}"`
  })

// dbt itself is not installed where the tests run: the project is checked as far as Postgres can check it
layer(TestDatabaseLive)("the dbt project in config/dbt", (it) => {
  it("is a dbt project whose profile reads the warehouse's settings", () => {
    const settings = parse(fs.readFileSync(path.join(project, "dbt_project.yml"), "utf8")) as { name: string; profile: string; "model-paths": Array<string> }
    const profiles = parse(fs.readFileSync(path.join(project, "profiles.yml"), "utf8")) as Record<string, { outputs: Record<string, { type: string }> }>
    expect(profiles[settings.profile]!.outputs.dev!.type).toBe("postgres")
    expect(settings["model-paths"]).toEqual(["models"])
    // one per stream table, line item table and custom_fields
    expect(models.length).toBe(allStreams.reduce((n, s) => n + 1 + s.children.length, 1))
  })

  it.effect("every staging model runs against the migrated schema and names each row's account", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { schema } = yield* TestDatabase
      for (const model of models) {
        const text = compiled(fs.readFileSync(path.join(project, "models/staging", model), "utf8"), schema)
        const result = yield* sql.unsafe(`SELECT * FROM (${text}) AS model LIMIT 0`).raw
        const columns = (result as { fields: Array<{ name: string }> }).fields
        expect(columns.map((c) => c.name), model).toEqual(expect.arrayContaining(["account_name", "account_id", "deleted_at"]))
      }
    })
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { isReservedWord } from "../../../src/schemaName.js"
import { TestDatabase, TestDatabaseEnv } from "../../support/database.js"

layer(TestDatabaseEnv)("DB_SCHEMA's keyword list", (it) => {
  it.effect("every keyword the server does not take as a plain name (pg_get_keywords, not unreserved) is refused; unreserved ones are not", () =>
    Effect.gen(function* () {
      const { url } = yield* TestDatabase
      const keywords = yield* Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          return (await client.query<{ word: string; catcode: string }>("SELECT word, catcode FROM pg_get_keywords()")).rows
        } finally {
          await client.end()
        }
      })
      expect(keywords.length).toBeGreaterThan(400)
      const wrong = keywords.filter((k) => isReservedWord(k.word) !== (k.catcode !== "U"))
      expect(wrong).toEqual([])
    })
  )
})

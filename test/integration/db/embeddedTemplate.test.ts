import { expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openEmbeddedDatabase } from "../../../src/db/embeddedTemplate.js"

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "embedded-template-test-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const open = (dataDir: string, template: string) =>
  Effect.acquireRelease(
    Effect.promise(() => openEmbeddedDatabase(dataDir, template)),
    (db) => Effect.promise(() => db.close())
  )

it.scoped("a new embedded database starts from the kept copy of an empty one, holds what is written to it, and a copy that does not load is replaced", () =>
  Effect.gen(function* () {
    const dir = yield* temporaryDirectory
    const template = path.join(dir, "cache", "embedded-postgres-test.tar")

    // the first new database is made by initdb, and a copy of it is kept
    yield* Effect.scoped(open("memory", template))
    expect(fs.statSync(template).size).toBeGreaterThan(1_000_000)
    expect(fs.statSync(template).mode & 0o777).toBe(0o600)

    // the next one loads the copy (here one that holds a marker table, so loading shows), and is durable on reopen
    yield* Effect.promise(async () => {
      const marked = await PGlite.create()
      await marked.exec("CREATE TABLE from_the_copy (x int)")
      fs.writeFileSync(template, Buffer.from(await (await marked.dumpDataDir("none")).arrayBuffer()))
      await marked.close()
    })
    const dataDir = path.join(dir, "pg")
    fs.mkdirSync(dataDir)
    yield* Effect.scoped(
      Effect.gen(function* () {
        const db = yield* open(dataDir, template)
        expect((yield* Effect.promise(() => db.query("SELECT x FROM from_the_copy"))).rows).toEqual([])
        yield* Effect.promise(() => db.exec("CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"))
      })
    )
    const reopened = yield* Effect.scoped(Effect.flatMap(open(dataDir, template), (db) => Effect.promise(() => db.query("SELECT x FROM kept"))))
    expect(reopened.rows).toEqual([{ x: 42 }])

    // a damaged copy: the database is made by initdb (no marker), and a good copy takes the damaged one's place
    fs.writeFileSync(template, "not a tar")
    const other = path.join(dir, "pg2")
    fs.mkdirSync(other)
    const marker = yield* Effect.scoped(
      Effect.flatMap(open(other, template), (db) => Effect.promise(() => db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'from_the_copy'")))
    )
    expect(marker.rows).toEqual([{ n: 0 }])
    expect(fs.statSync(template).size).toBeGreaterThan(1_000_000)
  }),
  // three embedded databases made and two initdb runs, all CPU: several times its time alone in a full suite
  300_000
)

import { expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { startEmbeddedPostgres } from "../../../src/db/EmbeddedPostgres.js"

/** Every entry under `root` (itself included) that its group or others may read, write or enter, with its mode. */
const openToOthers = (root: string): Array<string> => {
  const found: Array<string> = []
  const visit = (entry: string) => {
    const stat = fs.lstatSync(entry)
    if (stat.isSymbolicLink()) return
    if ((stat.mode & 0o077) !== 0) found.push(`${path.relative(root, entry) || "."} ${(stat.mode & 0o777).toString(8)}`)
    if (stat.isDirectory()) for (const child of fs.readdirSync(entry)) visit(path.join(entry, child))
  }
  visit(root)
  return found
}

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "embedded-pg-test-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const withClient = <A>(url: string, f: (client: pg.Client) => Promise<A>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  })

it.scoped("the embedded database's files are the user's alone (dirs 0700, files 0600), while open and after close", () =>
  Effect.gen(function* () {
    const dataDir = path.join(yield* temporaryDirectory, "pg")
    const scope = yield* Scope.make()
    const embedded = yield* startEmbeddedPostgres({ dataDir, searchPath: "account_sync" }).pipe(Scope.extend(scope))
    expect(openToOthers(dataDir)).toEqual([])
    // files made while it is open (a table, its index, the WAL it writes)
    yield* withClient(embedded.url, (client) => client.query("CREATE TABLE account_sync.t AS SELECT g AS x FROM generate_series(1, 5000) g; CREATE INDEX ON account_sync.t (x)"))
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700)
    yield* Scope.close(scope, Exit.void)
    expect(openToOthers(dataDir)).toEqual([])
    expect(fs.readdirSync(dataDir).length).toBeGreaterThan(5)
  })
)

it.scoped("its socket is a Unix socket in a directory only this user can enter (no TCP port), removed when it closes", () =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const embedded = yield* startEmbeddedPostgres({ dataDir: "memory", searchPath: "account_sync" }).pipe(Scope.extend(scope))
    expect(path.isAbsolute(embedded.host)).toBe(true)
    const dir = fs.statSync(embedded.host)
    expect(dir.isDirectory()).toBe(true)
    expect(dir.mode & 0o777).toBe(0o700)
    expect(dir.uid).toBe(process.getuid!())
    expect(fs.readdirSync(embedded.host)).toEqual([`.s.PGSQL.${embedded.port}`])
    expect(fs.statSync(path.join(embedded.host, `.s.PGSQL.${embedded.port}`)).isSocket()).toBe(true)
    const answer = yield* withClient(embedded.url, (client) => client.query<{ one: number }>("SELECT 1 AS one"))
    expect(answer.rows).toEqual([{ one: 1 }])
    yield* Scope.close(scope, Exit.void)
    expect(fs.existsSync(embedded.host)).toBe(false)
  })
)

it.scoped("read-only: an existing database opens read-only from its start and nothing is created; a missing one is refused, not made", () =>
  Effect.gen(function* () {
    const base = yield* temporaryDirectory
    const dataDir = path.join(base, "pg")
    yield* Effect.scoped(startEmbeddedPostgres({ dataDir, searchPath: "account_sync" }))
    const embedded = yield* startEmbeddedPostgres({ dataDir, searchPath: "other_schema", readOnly: true })
    const outcome = yield* withClient(embedded.url, async (client) => {
      const readOnly = (await client.query<{ default_transaction_read_only: string }>("SHOW default_transaction_read_only")).rows[0]
      const created = await client.query("CREATE TABLE account_sync.x ()").then(
        () => "created",
        (error: { code?: string }) => error.code
      )
      const schemas = (await client.query("SELECT nspname FROM pg_namespace WHERE nspname = 'other_schema'")).rowCount
      return { readOnly, created, schemas }
    })
    expect(outcome).toEqual({ readOnly: { default_transaction_read_only: "on" }, created: "25006", schemas: 0 })

    const missing = path.join(base, "never-made")
    const refused = yield* Effect.flip(startEmbeddedPostgres({ dataDir: missing, searchPath: "account_sync", readOnly: true }))
    expect(refused.message).toBe(`no embedded database in ${missing} yet (run \`account-sync migrate\`, or sync, first)`)
    expect(fs.existsSync(missing)).toBe(false)
  })
)

/**
 * Issue 22 point 4's alternative: COPY of a batch's rows into a temporary table and one merge statement from it,
 * against the page statement the connector runs, on the same pages of the same jobs (the landing benchmark's stream:
 * job scalars), landed one path after the other into one fresh schema (a different account each), in batches of
 * `--batch` pages as the pager gathers them. Each path does what a landing must: the rows, their checkpoint in the same
 * transaction, the stale-row guard, an unchanged row not rewritten.
 *
 *   npx tsx bench/copyMerge.ts [--jobs 100000] [--batch 8] [--rounds 2]
 *
 * Prints per path and round: rows/s, and CPU s per 10,000 rows of this process (the connector's share: building the
 * statement's parameters, or the COPY rows) and of Postgres (every server process), then COPY of the same rows as the
 * landing benchmark takes it (`\copy` into `jobs_copy`, the median of 3) and each path's ratio to it. The pages are
 * made before either path runs (the emulator's executor in this process) and are not counted: this is the write path
 * alone, without the fetching that shares the machine in `npm run bench`'s landing.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { pipeline } from "node:stream/promises"
import { Readable } from "node:stream"
import { AppsAndAccounts } from "../src/emulator/AppsAndAccounts.js"
import { executeOperation } from "../src/emulator/graphql/Executor.js"
import { selectOperation } from "../src/emulator/QueryCost.js"
import { serviceSchema } from "../src/emulator/schema.js"
import { VirtualClock } from "../src/emulator/VirtualClock.js"
import { Checkpoints, CheckpointsLive } from "../src/sync/Checkpoints.js"
import type { PageRows } from "../src/sync/landing/pageParams.js"
import type { Column } from "../src/sync/streams/Stream.js"
import { Warehouse, WarehouseLive } from "../src/sync/Warehouse.js"
import { TestDatabase, TestDatabaseLive } from "../test/support/database.js"
import { jobScalarsStream } from "../test/support/jobsOnly.js"
import { copyBaseline } from "./lib/benchmarks.js"
import { postgresCpu, postgresCpuSince } from "./lib/machine.js"

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const jobs = flag("jobs", 100_000)
const batchPages = flag("batch", 8)
const rounds = flag("rounds", 2)
process.env.TEST_DATABASE_URL ??= process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const stream = jobScalarsStream
const pageSize = 100

interface MadePage {
  readonly body: Buffer
  readonly nodes: ReadonlyArray<Record<string, unknown> & { id: string }>
}

/** The pages the service would answer, made by the emulator's executor. */
const makePages = (seed: number): ReadonlyArray<MadePage> => {
  const world = new AppsAndAccounts(new VirtualClock(() => Date.UTC(2026, 0, 1)), () => "http://127.0.0.1:1").createAccount({ jobs, seed }).world
  const document = stream.documents.offset.page
  const pages: Array<MadePage> = []
  for (let offset = 0; offset < jobs; offset += pageSize) {
    const result = executeOperation({
      schema: serviceSchema(),
      document,
      operation: selectOperation(document)!,
      variables: { ...stream.fullPass, first: pageSize, offset },
      world,
      maxPageSize: pageSize,
      roots: {},
      scopeOf: () => undefined,
      scopes: new Set()
    })
    const text = JSON.stringify({ data: result.data })
    const nodes = (JSON.parse(text) as { data: Record<string, { nodes: Array<Record<string, unknown> & { id: string }> }> }).data[stream.connectionPath[0]!]!.nodes
    pages.push({ body: Buffer.from(text), nodes })
  }
  return pages
}

const batches = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / batchPages) }, (_, i) => items.slice(i * batchPages, (i + 1) * batchPages))

interface Measured {
  readonly rowsPerSec: number
  readonly connectorCpuPer10k: number
  readonly postgresCpuPer10k: number
}

const measure = async (run: () => Promise<void>): Promise<Measured> => {
  const pg0 = postgresCpu()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await run()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const per10k = 10_000 / jobs
  return {
    rowsPerSec: jobs / seconds,
    connectorCpuPer10k: ((cpu.user + cpu.system) / 1e6) * per10k,
    postgresCpuPer10k: postgresCpuSince(pg0) * per10k
  }
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`
const columns = stream.columns.filter((c) => c.selected)

/** COPY's text format of one value: \N for null, objects as JSON, backslash, tab and line ends escaped. */
const copyText = (value: unknown): string => {
  if (value === null || value === undefined) return "\\N"
  const text = typeof value === "object" ? JSON.stringify(value) : String(value)
  return text.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
}
const valueAt = (node: Record<string, unknown>, c: Column): unknown =>
  c.path.reduce<unknown>((v, key) => (v === null || v === undefined ? v : (v as Record<string, unknown>)[key]), node)

/** The merge from the temporary table: the same upsert, guard and "unchanged rows are not rewritten" as the page statement. */
const mergeSql = (() => {
  const cols = [...columns.map((c) => quoted(c.column)), "raw"]
  return `INSERT INTO ${stream.table} AS t (account_id, id, ${cols.join(", ")})
    SELECT $1, s.id, ${cols.map((c) => `s.${c}`).join(", ")} FROM copied AS s
    ON CONFLICT (account_id, id) DO UPDATE SET ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL
    WHERE (${cols.map((c) => `t.${c}`).join(", ")}, t.deleted_at) IS DISTINCT FROM (${cols.map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)
      AND (t.updated_at > EXCLUDED.updated_at) IS NOT TRUE`
})()

const copyPath = async (client: pg.Client, accountId: string, pages: ReadonlyArray<MadePage>) => {
  await client.query(
    `CREATE TEMPORARY TABLE IF NOT EXISTS copied (id text, ${columns.map((c) => `${quoted(c.column)} ${c.type}`).join(", ")}, raw jsonb) ON COMMIT DELETE ROWS`
  )
  let position = 0
  for (const batch of batches(pages)) {
    position += batch.length
    const lines: Array<string> = []
    for (const page of batch) {
      for (const node of page.nodes) {
        lines.push([node.id, ...columns.map((c) => copyText(valueAt(node, c))), copyText(JSON.stringify(node))].join("\t") + "\n")
      }
    }
    await client.query("BEGIN")
    await pipeline(Readable.from([Buffer.from(lines.join(""))]), client.query(copyFrom(`COPY copied (id, ${columns.map((c) => quoted(c.column)).join(", ")}, raw) FROM STDIN`)))
    await client.query(mergeSql, [accountId])
    await client.query(`UPDATE sync_checkpoints SET position = $3, updated_at = now() WHERE account_id = $1 AND stream = $2`, [accountId, stream.name, position])
    await client.query("COMMIT")
  }
}

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const warehouse = yield* Warehouse
  const checkpoints = yield* Checkpoints
  const db = yield* TestDatabase
  const results: Array<string> = []
  for (let round = 1; round <= rounds; round++) {
    const pages = makePages(round)
    // today's path: the connector's Warehouse.land, pages as the pager hands them over (bodies kept, nodes slimmed)
    const statementAccount = `acc-statement-${round}`
    yield* checkpoints.begin(statementAccount, stream, "full")
    const statementPages: ReadonlyArray<PageRows> = pages.map((p) => ({
      body: p.body,
      nodes: p.nodes.map((n) => {
        const kept = { id: n.id, updatedAt: n.updatedAt as string }
        return { node: kept, raw: kept }
      })
    }))
    const runtime = yield* Effect.runtime<never>()
    const statement = yield* Effect.promise(() =>
      measure(async () => {
        let position = 0
        for (const batch of batches(statementPages)) {
          position += batch.length
          await Effect.runPromise(
            warehouse
              .land({ accountId: statementAccount, stream, pages: batch, pass: { kind: "full", partition: 0, position, anchors: [], shifted: false, highWaterMark: null } })
              .pipe(Effect.provide(runtime))
          )
        }
      })
    )
    // the alternative: COPY into a temporary table, one merge, the checkpoint, in one transaction a batch
    const copyAccount = `acc-copy-${round}`
    yield* checkpoints.begin(copyAccount, stream, "full")
    const client = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema} -c jit=off` })
    yield* Effect.promise(() => client.connect())
    const copy = yield* Effect.promise(() => measure(() => copyPath(client, copyAccount, pages)))
    yield* Effect.promise(() => client.end())
    const counts = yield* sql<{ account_id: string; n: number }>`SELECT account_id, count(*)::int AS n FROM jobs WHERE account_id IN (${statementAccount}, ${copyAccount}) GROUP BY 1`
    for (const c of counts) if (c.n !== jobs) throw new Error(`${c.account_id}: ${c.n} rows, expected ${jobs}`)
    const same = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM jobs a JOIN jobs b ON b.account_id = ${copyAccount} AND b.id = a.id
      WHERE a.account_id = ${statementAccount} AND (a.raw, a.title, a.total, a.updated_at) IS NOT DISTINCT FROM (b.raw, b.title, b.total, b.updated_at)`
    if (same[0]!.n !== jobs) throw new Error(`the two paths landed different rows: ${same[0]!.n} of ${jobs} equal`)
    const copyRunsMs = yield* copyBaseline(statementAccount, jobs)
    yield* sql.unsafe("DROP TABLE jobs_copy")
    const copyRowsPerSec = (jobs * 1000) / [...copyRunsMs].sort((a, b) => a - b)[1]!
    const line = (name: string, m: Measured) =>
      `${name.padEnd(22)} ${Math.round(m.rowsPerSec).toLocaleString("en-US").padStart(8)} rows/s = ${(m.rowsPerSec / copyRowsPerSec).toFixed(3)} of COPY   connector ${m.connectorCpuPer10k.toFixed(3)}   postgres ${m.postgresCpuPer10k.toFixed(3)} CPU s/10k`
    results.push(
      `round ${round}: ${jobs} jobs in batches of ${batchPages} pages; COPY ${Math.round(copyRowsPerSec).toLocaleString("en-US")} rows/s`,
      line("page statement", statement),
      line("COPY + merge", copy)
    )
    console.log(results.slice(-3).join("\n"))
  }
})

program.pipe(
  Effect.provide(WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(TestDatabaseLive))),
  Effect.runPromise
).catch((e) => {
  console.error(e)
  process.exit(1)
})

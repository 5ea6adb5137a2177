import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { AppsAndAccounts } from "../../src/emulator/AppsAndAccounts.js"
import { executeOperation } from "../../src/emulator/graphql/Executor.js"
import { selectOperation } from "../../src/emulator/QueryCost.js"
import { serviceSchema } from "../../src/emulator/schema.js"
import { VirtualClock } from "../../src/emulator/VirtualClock.js"
import { Checkpoints, CheckpointsLive } from "../../src/sync/pass/Checkpoints.js"
import type { PageRows } from "../../src/sync/landing/pageParams.js"
import { quoted } from "../../src/sync/landing/upsertSql.js"
import { at } from "../../src/sync/paging/pageNodes.js"
import { gatherPages } from "../../src/sync/paging/Pager.js"
import { Warehouse, WarehouseLive } from "../../src/sync/landing/Warehouse.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"
import { copyBaseline } from "./landing.js"
import { benchDatabaseUrl, freshSchemaLayer, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { postgresCpu, postgresCpuSince } from "./machine.js"

/**
 * The write path alone (issue 22 point 4): the same pages of the landing benchmark's stream (job scalars) landed
 * without the fetching that shares the machine in `landing`, two ways, one after the other into one fresh schema (an
 * account each), in batches of `gatherPages` pages as the pager gathers them when pages come faster than they land:
 * - the connector's page statement (Warehouse.land: the rows from the bodies as received, the checkpoint, the lease,
 *   the stale-row guard, in one statement a batch);
 * - COPY of the batch's rows (their columns taken out by the connector, text format) into an `ON COMMIT DELETE ROWS`
 *   temporary table, then one merge with the same upsert, guard and "unchanged rows are not rewritten", and the
 *   checkpoint, in one transaction a batch.
 * Both must land the same rows; then COPY of those rows as `landing` takes it. The pages are made first, by the
 * emulator's executor in this process, and not counted.
 */

export interface WritePathWay {
  readonly rowsPerSec: number
  readonly copyRatio: number
  /** CPU seconds per 10,000 rows of this process (the connector's share) and of Postgres (every server process). */
  readonly connectorCpuSecPer10k: number
  readonly postgresCpuSecPer10k: number
}

export interface WritePathResult {
  readonly jobs: number
  readonly batchPages: number
  readonly copyRowsPerSec: number
  readonly copyRunsSeconds: ReadonlyArray<number>
  readonly pageStatement: WritePathWay
  readonly copyAndMerge: WritePathWay
}

const stream = jobScalarsStream
const pageSize = stream.maxPageSize
const columns = stream.columns.filter((c) => c.selected)

interface MadePage {
  readonly body: Buffer
  readonly nodes: ReadonlyArray<Record<string, unknown> & { id: string }>
}

/** The pages the service would answer for a full pass over `jobs` jobs, made by the emulator's executor. */
const makePages = (jobs: number): ReadonlyArray<MadePage> => {
  const world = new AppsAndAccounts(new VirtualClock(() => Date.UTC(2026, 0, 1)), () => "http://127.0.0.1:1").createAccount({ jobs, seed: 4242 }).world
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
    const data = (JSON.parse(text) as { data: Record<string, { nodes: Array<Record<string, unknown> & { id: string }> }> }).data
    pages.push({ body: Buffer.from(text), nodes: data[stream.connectionPath[0]!]!.nodes })
  }
  return pages
}

const inBatches = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / gatherPages) }, (_, i) => items.slice(i * gatherPages, (i + 1) * gatherPages))

const measured = async (rows: number, run: () => Promise<void>) => {
  const pg0 = postgresCpu()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await run()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const per10k = 10_000 / rows
  return { rowsPerSec: rows / seconds, connectorCpuSecPer10k: ((cpu.user + cpu.system) / 1e6) * per10k, postgresCpuSecPer10k: postgresCpuSince(pg0) * per10k }
}

/** COPY's text format of one value: \N for null, objects as JSON, backslash, tab and line ends escaped. */
const copyText = (value: unknown): string => {
  if (value === null || value === undefined) return "\\N"
  const text = typeof value === "object" ? JSON.stringify(value) : String(value)
  return text.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
}

const mergeSql = (() => {
  const cols = [...columns.map((c) => quoted(c.column)), "raw"]
  return `INSERT INTO ${stream.table} AS t (account_id, id, ${cols.join(", ")})
    SELECT $1, s.id, ${cols.map((c) => `s.${c}`).join(", ")} FROM copied AS s
    ON CONFLICT (account_id, id) DO UPDATE SET ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, synced_at = now(), deleted_at = NULL
    WHERE (${cols.map((c) => `t.${c}`).join(", ")}, t.deleted_at) IS DISTINCT FROM (${cols.map((c) => `EXCLUDED.${c}`).join(", ")}, NULL::timestamptz)
      AND (t.updated_at > EXCLUDED.updated_at) IS NOT TRUE`
})()

const copyAndMerge = async (client: pg.Client, accountId: string, pages: ReadonlyArray<MadePage>) => {
  await client.query(
    `CREATE TEMPORARY TABLE IF NOT EXISTS copied (id text, ${columns.map((c) => `${quoted(c.column)} ${c.type}`).join(", ")}, raw jsonb) ON COMMIT DELETE ROWS`
  )
  let position = 0
  for (const batch of inBatches(pages)) {
    position += batch.length * pageSize
    const lines: Array<string> = []
    for (const page of batch) {
      for (const node of page.nodes) lines.push(`${[node.id, ...columns.map((c) => copyText(at(node, c.path))), copyText(node)].join("\t")}\n`)
    }
    await client.query("BEGIN")
    await pipeline(Readable.from([Buffer.from(lines.join(""))]), client.query(copyFrom(`COPY copied (id, ${columns.map((c) => quoted(c.column)).join(", ")}, raw) FROM STDIN`)))
    await client.query(mergeSql, [accountId])
    await client.query("UPDATE sync_checkpoints SET position = $3, updated_at = now() WHERE account_id = $1 AND stream = $2", [accountId, stream.name, position])
    await client.query("COMMIT")
  }
}

export const writePathBench = (jobs: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const warehouse = yield* Warehouse
    const checkpoints = yield* Checkpoints
    const schema = (yield* sql<{ s: string }>`SELECT current_schema() AS s`)[0]!.s
    const pages = makePages(jobs)
    const runtime = yield* Effect.runtime<never>()

    // the connector's page statement, the pages as the pager hands them over (bodies kept, nodes slimmed)
    const statementAccount = "write-path-statement"
    yield* checkpoints.begin(statementAccount, stream, "full")
    const slimmed: ReadonlyArray<PageRows> = pages.map((p) => ({
      body: p.body,
      nodes: p.nodes.map((n) => {
        const kept = { id: n.id, updatedAt: n.updatedAt as string }
        return { node: kept, raw: kept }
      })
    }))
    const statement = yield* Effect.promise(() =>
      measured(jobs, async () => {
        let position = 0
        for (const batch of inBatches(slimmed)) {
          position += batch.length * pageSize
          const pass = { kind: "full" as const, partition: 0, position, anchors: [], shifted: false, highWaterMark: null }
          await Effect.runPromise(warehouse.land({ accountId: statementAccount, stream, pages: batch, pass }).pipe(Effect.provide(runtime)))
        }
      })
    )

    const copyAccount = "write-path-copy"
    yield* checkpoints.begin(copyAccount, stream, "full")
    const client = new pg.Client({ connectionString: benchDatabaseUrl(), options: `-c search_path=${schema}` })
    yield* Effect.promise(() => client.connect())
    const copied = yield* Effect.promise(() => measured(jobs, () => copyAndMerge(client, copyAccount, pages))).pipe(Effect.ensuring(Effect.promise(() => client.end())))

    const differing = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM jobs a FULL JOIN jobs b ON b.account_id = ${copyAccount} AND b.id = a.id
      WHERE (a.account_id = ${statementAccount} OR b.account_id = ${copyAccount})
        AND (a.id IS NULL OR b.id IS NULL OR (a.raw, a.title, a.total, a.updated_at) IS DISTINCT FROM (b.raw, b.title, b.total, b.updated_at))`
    const landed = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${statementAccount}`
    if (landed[0]!.n !== jobs || differing[0]!.n !== 0) {
      return yield* new BenchError({ step: "writePath", reason: `the page statement landed ${landed[0]!.n} of ${jobs} rows; ${differing[0]!.n} differ from COPY + merge's` })
    }
    const copyRunsMs = yield* copyBaseline(statementAccount, jobs)
    const copyRowsPerSec = (jobs * 1000) / [...copyRunsMs].sort((a, b) => a - b)[Math.floor(copyRunsMs.length / 2)]!
    const way = (m: Awaited<ReturnType<typeof measured>>): WritePathWay => ({ ...m, copyRatio: m.rowsPerSec / copyRowsPerSec })
    return {
      jobs,
      batchPages: gatherPages,
      copyRowsPerSec,
      copyRunsSeconds: copyRunsMs.map((ms) => ms / 1000),
      pageStatement: way(statement),
      copyAndMerge: way(copied)
    } satisfies WritePathResult
  }).pipe(Effect.provide(WarehouseLive.pipe(Layer.provideMerge(CheckpointsLive), Layer.provideMerge(freshSchemaLayer(freshSchemaName("writepath"))))))

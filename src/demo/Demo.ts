import { SqlClient } from "@effect/sql"
import { Clock, ConfigProvider, Console, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Connections } from "../auth/Connections.js"
import { SyncLayer } from "../cli/app.js"
import { connectionsTable } from "../cli/statusConnections.js"
import { count } from "../cli/output/text.js"
import { rowsTable } from "../cli/query.js"
import { lastRunsByAccount, StreamStatus, StreamStatusLive } from "../health/StreamStatus.js"
import { renderSummary } from "../cli/summary.js"
import { terminalTableWidth } from "../cli/table.js"
import { Emulator } from "../emulator/Emulator.js"
import { authServer } from "../serve/Server.js"
import { allStreams } from "../sync/streams/index.js"
import { type RunRequest, SyncRunner } from "../run/SyncRunner.js"
import { compareStream } from "./exactness.js"
import { say, step, versionsTable } from "./printing.js"
import { dropSchema, freePort, nextHop } from "./setup.js"
import { landedJobs, streamRowCounts, versionCounts, versionsOfMostEditedJob } from "./warehouseReads.js"

export interface DemoOptions {
  /** Embedded data lives here (ignored with `databaseUrl`). */
  readonly dataDir: string
  /** Use this Postgres instead of the embedded one; the demo writes only to `schema`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly schema: string
  readonly jobsPerAccount: number
}

const accountsToCreate = [
  { name: "Northwind Landscaping", seed: 11 },
  { name: "Bluebird Plumbing & Heating", seed: 23 }
]

/** The query the demo's last lines (and the README) suggest. */
export const lookAgain = "SELECT job_number, title, total FROM jobs LIMIT 5"

/** The README's example queries over the warehouse (the demo prints their answers). */
export const exampleQueries: ReadonlyArray<{ readonly title: string; readonly sql: string }> = [
  {
    title: "revenue per client: the five largest invoice totals by client",
    sql: `SELECT c.name AS client, count(*) AS invoices,
       sum(i.amounts_total) AS revenue
FROM invoices i
JOIN clients c ON c.account_id = i.account_id AND c.id = i.client_id
WHERE i.deleted_at IS NULL AND c.deleted_at IS NULL
GROUP BY c.name ORDER BY revenue DESC NULLS LAST LIMIT 5;`
  },
  {
    title: "open jobs per property: the five properties with the most active jobs",
    sql: `SELECT concat_ws(', ', p.address_street, p.address_city) AS property,
       count(*) AS open_jobs
FROM jobs j
JOIN properties p ON p.account_id = j.account_id AND p.id = j.property_id
WHERE j.deleted_at IS NULL AND p.deleted_at IS NULL
  AND j.job_status IN ('active', 'today', 'upcoming', 'late',
                       'action_required')
GROUP BY p.id, property ORDER BY open_jobs DESC, property LIMIT 5;`
  }
]

/**
 * The whole job on embedded defaults: an emulated service with two accounts, the real OAuth flow through `serve`'s
 * routes (consent auto-approved), a backfill with progress, edits and deletions then an incremental sync, an
 * APP_DISCONNECT for one account, and the resulting status and warehouse rows.
 */
export const runDemo = (options: DemoOptions) =>
  Effect.gen(function* () {
    const servePort = yield* freePort
    const callbackBase = `http://127.0.0.1:${servePort}`
    const clientId = "account-sync-demo"
    const clientSecret = crypto.randomBytes(24).toString("base64url")

    yield* step("starting the service emulator")
    const emulator = yield* Emulator.make({
      port: 0,
      approval: { mode: "auto" },
      // the real service restores 500 points/s; 20x that keeps the demo under a minute with the same mechanics
      limits: { maxPoints: 20_000, restoreRate: 10_000 }
    })
    // the app's id is what its webhooks carry (appId): configured below as SERVICE_APP_ID
    const { appId } = yield* emulator.admin.createApp({
      clientId,
      clientSecret,
      redirectUri: `${callbackBase}/oauth/callback`,
      webhookUrl: `${callbackBase}/webhooks`,
      rotation: true,
      name: "account-sync demo",
      author: "account-sync"
    })
    const admin = emulator.admin
    const accounts = yield* Effect.forEach(accountsToCreate, (a) =>
      admin.createAccount({ name: a.name, jobs: options.jobsPerAccount, seed: a.seed })
    )
    yield* Console.log(`emulator at ${emulator.baseUrl}: ${accountsToCreate.length} accounts x ${options.jobsPerAccount} jobs`)

    const usingEmbedded = Option.isNone(options.databaseUrl)
    const inMemory = options.dataDir === "memory"
    if (usingEmbedded) {
      // a fresh demo every time: the emulator's data is new, so the old warehouse would not match it
      if (!inMemory) yield* Effect.sync(() => fs.rmSync(path.resolve(options.dataDir, "pg"), { recursive: true, force: true }))
    } else {
      yield* dropSchema(Redacted.value(options.databaseUrl.value), options.schema)
    }
    // the application as the program assembles it, configured as an operator would (only the values differ)
    const configuration = new Map<string, string>([
      ["SERVICE_BASE_URL", emulator.baseUrl],
      ["SERVICE_CLIENT_ID", clientId],
      ["SERVICE_APP_ID", appId],
      ["SERVICE_CLIENT_SECRET", clientSecret],
      ["SERVICE_REDIRECT_URI", `${callbackBase}/oauth/callback`],
      // on an embedded database kept on disk, its key stays beside it (<data dir>/token-encryption.key, as for any
      // command there): `status`, `sync` and the rest work on the demo's data afterwards
      ...(usingEmbedded && !inMemory ? [] : [["TOKEN_ENCRYPTION_KEY", crypto.randomBytes(32).toString("base64")] as const]),
      ["DB_SCHEMA", options.schema],
      // every version of jobs and invoices kept beside them (jobs_history, invoices_history and their line items')
      ["SYNC_HISTORY", "jobs,invoices"],
      ...(Option.isSome(options.databaseUrl)
        ? [["DATABASE_URL", Redacted.value(options.databaseUrl.value)] as const]
        : [["DATA_DIR", options.dataDir] as const])
    ])
    const services = SyncLayer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(configuration))))
    // the database starts (and is migrated) before the next step: tens of seconds on a busy machine, said first
    yield* step(usingEmbedded ? `starting the embedded Postgres (its data in ${inMemory ? "memory, gone when the demo ends" : options.dataDir}) and creating its tables` : `creating the tables in schema ${options.schema}`)

    return yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* step(`serve's OAuth routes and webhook receiver on ${callbackBase}`)
      yield* Layer.launch(authServer({ port: servePort, host: "127.0.0.1" })).pipe(Effect.forkScoped)
      yield* nextHop(`${callbackBase}/healthz`).pipe(
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(100)))),
        Effect.orDie
      )

      yield* step("connecting both accounts through the real OAuth code flow (PKCE, consent auto-approved)")
      const connections = yield* Connections
      for (const account of accounts) {
        yield* admin.setApproval({ mode: "auto", accountId: account.accountId })
        const start = yield* nextHop(`${callbackBase}/oauth/start`)
        const consent = yield* nextHop(start.location!)
        const callback = yield* nextHop(consent.location!)
        if (callback.status !== 200) return yield* Effect.dieMessage(`connecting ${account.name} failed: ${callback.body}`)
        // the flow logs "connected <name> (<id>)" itself
        if (Option.isNone(yield* connections.get(account.accountId))) yield* Console.log(`not connected: ${account.name}`)
      }

      const runner = yield* SyncRunner
      /** One run of the sync engine and its summary, as `sync` and `backfill` print it. */
      const run = (request: RunRequest) =>
        Effect.gen(function* () {
          const startedAt = yield* Clock.currentTimeMillis
          const reports = yield* runner.run(request)
          const durationMs = (yield* Clock.currentTimeMillis) - startedAt
          yield* Console.log(renderSummary(reports, { mode: request.mode, durationMs, maxWidth: terminalTableWidth() }))
          return reports
        })
      yield* step("backfill: a full pass of every stream for every active account")
      yield* run({ mode: "backfill" })

      const [first, second] = accounts
      yield* step(`changes in ${first!.name}: 40 jobs edited and 15 deleted, 10 invoices edited and 3 deleted, line items of 3 invoices changed, 5 clients edited, 2 visits deleted; then an incremental sync`)
      const edited = yield* admin.editRecords({ accountId: first!.accountId, collection: "jobs", count: 40, seed: 7 })
      const deleted = yield* admin.deleteRecords({ accountId: first!.accountId, collection: "jobs", count: 15, seed: 8 })
      yield* admin.editRecords({ accountId: first!.accountId, collection: "invoices", count: 10, seed: 9 })
      yield* admin.deleteRecords({ accountId: first!.accountId, collection: "invoices", count: 3, seed: 10 })
      yield* admin.editLineItems({ accountId: first!.accountId, collection: "invoices", count: 3, add: 1, remove: 1, edit: 1, seed: 11 })
      yield* admin.editRecords({ accountId: first!.accountId, collection: "clients", count: 5, seed: 12 })
      yield* admin.deleteRecords({ accountId: first!.accountId, collection: "visits", count: 2, seed: 13 })
      const afterEdits = yield* run({ mode: "sync" })
      // an edited job deleted afterwards is gone from the service: the incremental pass cannot return it
      const gone = new Set(deleted.ids)
      const editedLive = edited.ids.filter((id) => !gone.has(id))
      const serviceJobs = new Map((yield* admin.listRecords({ accountId: first!.accountId, collection: "jobs" })).map((r) => [String(r.id), r]))
      const warehouseJobs = editedLive.length === 0 ? [] : yield* landedJobs(first!.accountId, editedLive)
      const landed = warehouseJobs.filter((j) => {
        const service = serviceJobs.get(j.id)
        return service !== undefined && j.title === service.title && j.updated_at?.getTime() === Date.parse(String(service.updatedAt))
      }).length
      const jobsWritten = afterEdits.find((a) => a.accountId === first!.accountId)?.streams.find((s) => s.stream === "jobs")?.counts.rowsWritten
      yield* say(
        `${landed} of the ${editedLive.length} edited jobs still in the service landed by the incremental pass, as the service has them now${jobsWritten === landed ? " (the jobs row's WRITTEN)" : ""}` +
          (editedLive.length < edited.ids.length ? `; the other ${edited.ids.length - editedLive.length} of the ${edited.ids.length} edited were then deleted` : "")
      )
      yield* say(
        `${deleted.ids.length} job deletions (and the invoices' and visits') are invisible to an incremental pass; a full pass (daily by default) marks them: running one now`
      )
      yield* run({ mode: "backfill", accounts: [first!.accountId], restart: true })

      yield* step("history (SYNC_HISTORY=jobs,invoices): every version of a row, beside the current table")
      const kept = yield* versionCounts
      yield* say(`${count(kept.jobs)} job versions and ${count(kept.invoices)} invoice versions kept; the versions of one edited job:`)
      // at 80 columns the title is what gets cut
      yield* Console.log(versionsTable(yield* versionsOfMostEditedJob(first!.accountId, edited.ids)))

      yield* step(`${second!.name}'s admin disconnects the app in the marketplace (APP_DISCONNECT webhook to /webhooks)`)
      yield* admin.marketplaceDisconnect({ clientId, accountId: second!.accountId })
      yield* connections.get(second!.accountId).pipe(
        Effect.flatMap((c) => (Option.isSome(c) && c.value.status === "disconnected" ? Effect.void : Effect.fail("pending"))),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100)))),
        Effect.orElse(() => Console.log("the webhook did not arrive in 10 s"))
      )
      yield* step("the next sync run: the disconnected account is not touched, the other one syncs")
      yield* run({ mode: "sync" })

      yield* step("account-sync status")
      const streamStates = yield* Effect.provide(Effect.flatMap(StreamStatus, (s) => s.list(allStreams)), StreamStatusLive)
      const view = { now: yield* Clock.currentTimeMillis, wide: false, maxWidth: terminalTableWidth() }
      yield* Console.log(connectionsTable(yield* connections.list(), lastRunsByAccount(streamStates), view))

      yield* step("the warehouse: every stream")
      for (const stream of allStreams) {
        const rows = yield* streamRowCounts(stream)
        const children = rows.children.map((c) => `${c.live} ${c.table}`)
        yield* Console.log(`${stream.table.padEnd(11)} ${String(rows.live).padStart(6)} live, ${String(rows.deleted).padStart(4)} deleted${children.length > 0 ? `; ${children.join(", ")}` : ""}`)
      }
      yield* step("joins over the warehouse (the README's example queries)")
      for (const query of exampleQueries) {
        yield* Console.log(`\n${query.title}:\n${query.sql.split("\n").map((line) => `    ${line}`).join("\n")}`)
        yield* Console.log(rowsTable(yield* sql.unsafe<Record<string, unknown>>(query.sql)))
      }
      yield* step("check: the warehouse holds exactly what the service holds, stream by stream")
      const checks = yield* Effect.forEach(accounts, (account) =>
        Effect.gen(function* () {
          const streams = yield* Effect.forEach(allStreams, (stream) => compareStream(admin, stream, account.accountId))
          const bad = streams.filter((c) => c.missing + c.mismatched + c.wronglyDeleted + c.stillLive + c.nestedMismatched > 0)
          const matches = bad.length === 0
          const jobs = streams.find((c) => c.stream === "jobs")!
          const status = Option.match(yield* connections.get(account.accountId), { onNone: () => "none", onSome: (c) => c.status })
          const rows = streams.reduce((n, c) => n + c.serviceRows, 0)
          yield* say(
            `${account.name}: ${matches ? "exact" : "MISMATCH"}: ${count(rows)} records of ${streams.length} streams compared column by column, with their line items and custom fields (connection ${status})`
          )
          for (const c of bad) {
            yield* say(
              `  ${c.stream}: missing ${c.missing}, differing ${c.mismatched}, wrongly deleted ${c.wronglyDeleted}, still live ${c.stillLive}, line items or custom fields ${c.nestedMismatched}; ${c.examples.join("; ")}`
            )
          }
          return { accountId: account.accountId, name: account.name, status, serviceJobs: jobs.serviceRows, warehouseJobs: jobs.serviceRows - jobs.missing, matches, streams }
        })
      )
      yield* Console.log(
        !usingEmbedded
          ? `\nThe data is in schema ${options.schema} of DATABASE_URL. Look at it again with:\n` +
              `  export DB_SCHEMA=${options.schema}\n` +
              "  npx account-sync status\n" +
              `  npx account-sync query "${lookAgain}"`
          : inMemory
            ? "\nThe data was in memory and is gone with the demo: run it with --data-dir DIR to keep it."
            : `\nThe data stays in ${path.resolve(options.dataDir)}. Look at it again with:\n` +
              `  export DATA_DIR=${options.dataDir} DB_SCHEMA=${options.schema}\n` +
              "  npx account-sync status\n" +
              `  npx account-sync query "${lookAgain}"`
      )
      return { accounts: checks }
    }).pipe(Effect.provide(services), Effect.scoped)
  }).pipe(Effect.scoped)

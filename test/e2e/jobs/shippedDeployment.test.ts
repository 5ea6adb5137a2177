import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseLayer } from "../../../src/cli/app.js"
import type { queueJson } from "../../../src/cli/status.js"
import { offlineEnv } from "../../support/auth.js"
import { approveInBrowser } from "../../support/browser.js"
import { type CliResult, runCli, spawnCli } from "../../support/cli.js"
import { type Env, withEnv } from "../../support/config.js"
import { connectorEnv, freePort } from "../../support/connector.js"
import { asSuperuser, embeddedTestDatabase, testDatabaseUrlAs, withPgClient } from "../../support/database.js"
import { makeTestEmulator, TestEmulator } from "../../support/emulator.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { podContainerOf, projectRoot } from "../../support/manifests.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { queueTestEnv, syncRuns, waitUntil, withQueue } from "../../support/workers.js"

const psqlAvailable = spawnSync("psql", ["--version"]).status === 0
const rolesSql = path.join(projectRoot, "config/postgres/roles.sql")

/** A database of the test server by name, logged in as its superuser (TEST_DATABASE_URL's login). */
const databaseUrl = (database: string, login?: { readonly role: string; readonly password: string }) => {
  const url = new URL(login ? testDatabaseUrlAs(login.role, login.password) : process.env.TEST_DATABASE_URL!)
  url.pathname = `/${database}`
  return url.toString()
}

/** The SQLSTATE a statement ended with as `url`'s login, or its rows. */
const asLogin = (url: string, statement: string) =>
  withPgClient(url, (client) =>
    client.query(statement).then(
      (r) => ({ rows: r.rows as Array<Record<string, unknown>> }),
      (error: unknown) => ({ code: (error as { code?: string }).code ?? String(error) })
    )
  )

/** roles.sql's default for a psql variable (`\set app_role account_sync`): what the manifests' Secret logs in as. */
const rolesSqlDefault = (variable: string) => new RegExp(`\\\\set ${variable} (\\w+)`).exec(fs.readFileSync(rolesSql, "utf8"))?.[1]

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual" })
    return { status: response.status, location: response.headers.get("location"), body: await response.text() }
  })

/** Polls `url` until it answers 200 (for up to a minute); the process serving it ending first fails with its stderr. */
const untilAnswered = (url: string, server: { readonly exit: Effect.Effect<CliResult> }) =>
  Effect.raceFirst(
    get(url).pipe(
      Effect.filterOrFail((r) => r.status === 200),
      Effect.catchAllDefect((e) => Effect.fail(e)),
      Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.intersect(Schedule.recurs(240)))),
      Effect.orDie
    ),
    Effect.flatMap(server.exit, (e) => Effect.dieMessage(`${url}: the process exited (${e.code ?? e.signal}) before answering: ${e.stderr.slice(-1500)}`))
  )

/** roles.sql applied by the superuser to `database` for a schema and roles named after `run`; the psql result. */
const applyRolesSql = (database: string, run: string, passwords: { readonly app: string; readonly reader: string }) =>
  spawnSync(
    "psql",
    [databaseUrl(database), "-q", "-v", "ON_ERROR_STOP=1", "-v", `schema=${run}`, "-v", `app_role=${run}_app`, "-v", `app_password=${passwords.app}`,
      "-v", `reader_role=${run}_reader`, "-v", `reader_password=${passwords.reader}`, "-f", rolesSql],
    { encoding: "utf8" }
  )

const runName = (what: string) => `t_${what}_${Date.now().toString(36)}_${crypto.randomBytes(3).toString("hex")}`

const succeededRuns = (kind: string) =>
  Effect.map(syncRuns, (runs) => runs.filter((r) => r.kind === kind && r.outcome === "succeeded").length)

type QueueJson = ReturnType<typeof queueJson>

// The deployment config/ ships, on a database of its own: roles.sql applied by the superuser, then serve (WORKERS=true)
// and two workers as the app role, with the arguments and environment of config/kubernetes's manifests; query as
// the reader. Roles are the cluster's: every name is this run's own, and all are dropped at the end.
it.scopedLive.skipIf(embeddedTestDatabase() || !psqlAvailable)(
  "the shipped deployment: roles.sql on a fresh database, serve with WORKERS=true and two workers as the app role (the manifests' settings) connect, backfill and sync an account through the queue; status shows the queue; query reads as the reader",
  () =>
    Effect.gen(function* () {
      const run = runName("deploy")
      const [schema, app, reader, analyst] = [run, `${run}_app`, `${run}_reader`, `${run}_analyst`]
      const passwords = { app: crypto.randomBytes(12).toString("hex"), reader: crypto.randomBytes(12).toString("hex"), analyst: crypto.randomBytes(12).toString("hex") }
      yield* asSuperuser([`CREATE DATABASE ${run}`])
      yield* Effect.addFinalizer(() =>
        asSuperuser([`DROP DATABASE IF EXISTS ${run} WITH (FORCE)`, ...[analyst, reader, app, `${schema}_query`].map((r) => `DROP ROLE IF EXISTS ${r}`)])
      )
      const roles = applyRolesSql(run, run, passwords)
      expect(roles.status, roles.stderr).toBe(0)
      const appUrl = databaseUrl(run, { role: app, password: passwords.app })
      const readerUrl = databaseUrl(run, { role: reader, password: passwords.reader })

      const servePort = yield* freePort
      const emulator = yield* makeTestEmulator({ accounts: 1, jobs: 400, redirectUri: `http://127.0.0.1:${servePort}/oauth/callback` })
      const accountId = emulator.accounts[0]!.accountId

      // what the manifests configure: each container's arguments and env, the Secret's keys filled for this database
      const serveManifest = podContainerOf("deployment-serve.yaml")
      const workerManifest = podContainerOf("deployment-workers.yaml")
      expect(new URL(serveManifest.secretKeys.DATABASE_URL!).username).toBe(rolesSqlDefault("app_role"))
      expect(new URL(serveManifest.secretKeys.QUERY_DATABASE_URL!).username).toBe(rolesSqlDefault("reader_role"))
      expect(serveManifest.env.WORKERS).toBe("true")
      const values: Env = { ...connectorEnv(emulator), DATABASE_URL: appUrl, QUERY_DATABASE_URL: readerUrl }
      const secret = Object.fromEntries(Object.keys(serveManifest.secretKeys).map((key) => [key, values[key]!]))
      expect(Object.entries(secret).filter(([, v]) => v === undefined)).toEqual([])
      // beside them only: the schema's name (this run's), the jobs stream alone, test-sized queue timings
      const extra: Env = { ...connectorEnv(emulator), ...queueTestEnv, DB_SCHEMA: schema, SYNC_INCREMENTAL_EVERY: "1 second" }
      const serveEnv: Env = { ...extra, ...secret, ...serveManifest.env }
      const workerEnv = (metricsPort: number): Env => ({ ...extra, ...secret, ...workerManifest.env, METRICS_PORT: String(metricsPort) })
      const withPort = (args: ReadonlyArray<string>, port: number) => args.map((a, i) => (args[i - 1] === "--port" ? String(port) : a))

      const serve = yield* spawnCli(withPort(serveManifest.args, servePort), serveEnv)
      const base = `http://127.0.0.1:${servePort}`
      yield* untilAnswered(`${base}/readyz`, serve)
      const workerPorts = [yield* freePort, yield* freePort]
      const workers = []
      for (const port of workerPorts) workers.push(yield* spawnCli(workerManifest.args, workerEnv(port)))
      for (const [i, port] of workerPorts.entries()) yield* untilAnswered(`http://127.0.0.1:${port}/readyz`, workers[i]!)

      // connected through serve's flow: /oauth/start, the emulator's consent as the account's admin, /oauth/callback
      const start = yield* get(`${base}/oauth/start`)
      expect(start.status).toBe(302)
      const hinted = new URL(start.location!)
      hinted.searchParams.set("login_hint", accountId)
      const consent = yield* approveInBrowser(hinted.toString(), { accountId })
      const callback = yield* get(consent.location!)
      expect(callback.status, callback.body).toBe(200)

      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // the backfill serve enqueued, run by a worker; then a change at the service, synced by the schedule's job
        yield* waitUntil("the account's backfill", 120, Effect.map(succeededRuns("full"), (n) => n === 1))
        expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(400)
        yield* emulator.admin.editRecords({ accountId, collection: "jobs", count: 5, seed: 11 })
        yield* Effect.sleep("1500 millis")
        yield* withQueue({ ...serveEnv, ...extra }, (queue) => queue.tick)
        yield* waitUntil("the account's incremental sync", 60, Effect.map(succeededRuns("incremental"), (n) => n === 1))
        expect(yield* expectStreamExact(jobScalarsStream, accountId)).toBe(400)
        // pg-boss's tables are the app role's, in the schema roles.sql made
        const owners = yield* sql<{ owner: string }>`SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = ${`${schema}_queue`}`
        expect(owners.map((o) => o.owner)).toEqual([app])
      }).pipe(Effect.provide(Layer.fresh(DatabaseLayer).pipe(Layer.provide(withEnv(serveEnv)))), Effect.provideService(TestEmulator, emulator))

      // status as the app role shows the queue: the jobs per kind, and the account
      const status = yield* runCli(["status", "--json"], serveEnv)
      expect(status.code, status.stderr).toBe(0)
      const queue = (JSON.parse(status.stdout) as { queue: QueueJson | null }).queue
      expect(queue).not.toBeNull()
      expect(queue!.kinds.map((k) => k.kind)).toEqual(expect.arrayContaining(["backfill", "sync"]))
      expect(queue!.accounts.map((a) => a.accountId)).toEqual([accountId])

      // query runs as the reader (QUERY_DATABASE_URL), which reads the warehouse and no OAuth state
      const query = yield* runCli(["query", "--json", "SELECT current_user AS who, count(*)::int AS jobs FROM jobs"], serveEnv)
      expect(query.code, query.stderr).toBe(0)
      expect(JSON.parse(query.stdout)).toEqual([{ who: reader, jobs: 400 }])
      for (const table of ["oauth_tokens", "oauth_pending", "token_keys"]) {
        const refused = yield* runCli(["query", `SELECT count(*) FROM ${table}`], serveEnv)
        expect(refused.code, table).not.toBe(0)
        expect(refused.stderr, table).toContain(`permission denied for table ${table}`)
      }
      // an analyst given the account by grant-reader reads its rows, and no OAuth state either
      yield* asSuperuser([`CREATE ROLE ${analyst} LOGIN PASSWORD '${passwords.analyst}'`])
      const granted = yield* runCli(["grant-reader", "--role", analyst, "--account", accountId], serveEnv)
      expect(granted.code, granted.stderr).toBe(0)
      const analystUrl = databaseUrl(run, { role: analyst, password: passwords.analyst })
      expect(yield* asLogin(analystUrl, `SELECT count(*)::int AS n FROM ${schema}.jobs`)).toEqual({ rows: [{ n: 400 }] })
      for (const table of ["oauth_tokens", "oauth_pending", "token_keys"]) {
        expect(yield* asLogin(analystUrl, `SELECT count(*) FROM ${schema}.${table}`), table).toEqual({ code: "42501" })
      }

      serve.child.kill("SIGTERM")
      for (const w of workers) w.child.kill("SIGTERM")
      expect((yield* serve.exit).code).toBe(143)
      const ended = []
      for (const w of workers) ended.push(yield* w.exit)
      for (const e of ended) expect(e.code, e.stderr.slice(-2000)).toBe(143)
      expect(ended.some((e) => e.stderr.includes("done: synced"))).toBe(true)
    }),
  300_000
)

// The app role without the queue's schema (an install from before roles.sql made it), or with one it may not use:
// worker and serve stop with one line naming the role, what it lacks and the command that gives it (exit 2), and that
// command, run as an admin, is all it takes.
it.scopedLive.skipIf(embeddedTestDatabase() || !psqlAvailable)(
  "a privilege missing at the queue's start is one line: the role, what it lacks, the command that gives it (exit 2); with that command run, the worker starts",
  () =>
    Effect.gen(function* () {
      const run = runName("queuegrant")
      const [app, queueSchema] = [`${run}_app`, `${run}_queue`]
      const passwords = { app: crypto.randomBytes(12).toString("hex"), reader: crypto.randomBytes(12).toString("hex") }
      const database = new URL(process.env.TEST_DATABASE_URL!).pathname.slice(1)
      yield* Effect.addFinalizer(() =>
        asSuperuser([`DROP SCHEMA IF EXISTS ${run}, ${queueSchema} CASCADE`, ...[`${run}_reader`, app, `${run}_query`].flatMap((r) => [`DROP OWNED BY ${r}`, `DROP ROLE IF EXISTS ${r}`])])
      )
      const roles = applyRolesSql(database, run, passwords)
      expect(roles.status, roles.stderr).toBe(0)
      const env = offlineEnv({ DATABASE_URL: databaseUrl(database, { role: app, password: passwords.app }), DB_SCHEMA: run, ...queueTestEnv })
      const startsWorking = Effect.gen(function* () {
        const port = yield* freePort
        const worker = yield* spawnCli(["worker"], { ...env, METRICS_PORT: String(port) })
        yield* untilAnswered(`http://127.0.0.1:${port}/readyz`, worker)
        worker.child.kill("SIGTERM")
        expect((yield* worker.exit).code).toBe(143)
      })
      const lastLine = (r: CliResult) => r.stderr.trimEnd().split("\n").at(-1)

      yield* asSuperuser([`DROP SCHEMA ${queueSchema}`])
      const missing = `job queue: the job queue's schema ${queueSchema} does not exist and the role ${app} may not create it (no CREATE on database ${database}); as an admin: CREATE SCHEMA ${queueSchema} AUTHORIZATION ${app} (or run config/postgres/roles.sql again, which makes it)`
      const worker = yield* runCli(["worker"], env)
      expect(worker.code, worker.stderr).toBe(2)
      expect(lastLine(worker)).toBe(`worker: ${missing}`)
      const serve = yield* runCli(["serve", "--port", String(yield* freePort), "--host", "127.0.0.1"], { ...env, WORKERS: "true" })
      expect(serve.code, serve.stderr).toBe(2)
      expect(lastLine(serve)).toBe(`serve: WORKERS=true: ${missing}`)
      yield* asSuperuser([`CREATE SCHEMA ${queueSchema} AUTHORIZATION ${app}`])
      yield* Effect.scoped(startsWorking)

      // a schema there, but not the app role's
      yield* asSuperuser([`DROP SCHEMA ${queueSchema} CASCADE`, `CREATE SCHEMA ${queueSchema}`])
      const notUsable = yield* runCli(["worker"], env)
      expect(notUsable.code, notUsable.stderr).toBe(2)
      expect(lastLine(notUsable)).toBe(
        `worker: job queue: the role ${app} lacks USAGE and CREATE on the job queue's schema ${queueSchema}; as an admin: ALTER SCHEMA ${queueSchema} OWNER TO ${app} (or run config/postgres/roles.sql again)`
      )
      yield* asSuperuser([`ALTER SCHEMA ${queueSchema} OWNER TO ${app}`])
      yield* Effect.scoped(startsWorking)
    }),
  240_000
)

import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Connections } from "../../src/auth/Connections.js"
import { TokenStore } from "../../src/auth/TokenStore.js"
import type { Faults } from "../../src/emulator/EmulatorAdmin.js"
import type { AccountJob } from "../../src/jobs/JobKinds.js"
import { JobQueue, JobQueueLive } from "../../src/jobs/JobQueue.js"
import { JobSettings } from "../../src/jobs/JobSettings.js"
import { terminateBackendsOf } from "./backends.js"
import { uniqueAccountId } from "./benchAccounts.js"
import { allStreams } from "../../src/sync/streams/index.js"
import { compareStream, type StreamComparison } from "../../src/demo/exactness.js"
import { checkHistory } from "./historyCheck.js"
import { childEnv, connectAccount, connectorLayer, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { binPath, nodeArgs, nodeEnv, type EmulatorProcess, startEmulatorProcess } from "./emulatorProcess.js"
import { type Prng, seeded } from "./prng.js"
import { accountsHeldBy, backfillsUnderCap, databaseNow, type Hang, hangUntilTaken, runAgainSeconds, secondsUntil } from "./workerFaults.js"
import { countFencedWrites, type FencedWrites, installWriteLog } from "./writeLog.js"

export interface ChaosOptions {
  readonly seed: number
  readonly accounts: number
  readonly jobs: number
  /** SIGKILLs of the connector child, at least (spread over the passes; the last pass kills until it is reached). */
  readonly minKills: number
  readonly minTerminations: number
  /** Kills planned per pass: backfill, each incremental sync, the final full pass. */
  readonly killsPerPass: { readonly backfill: number; readonly sync: number; readonly full: number }
  /** Incremental syncs between the backfill and the final full pass. */
  readonly incrementalSyncs: number
  /** Random moment of a kill, ms after the child's run started (its first sync_runs row), per pass kind. */
  readonly killWindowMs: { readonly backfill: readonly [number, number]; readonly sync: readonly [number, number] }
  readonly faults: Faults
  readonly editsPerPass: number
  readonly deletesPerPass: number
  /** Data moving under the pager (offset cursors): per query of a churned collection, during the backfill and the full pass. */
  readonly churn: { readonly creates: number; readonly edits: number; readonly deletes: number; readonly queries: number; readonly collections: ReadonlyArray<string> }
  /** Every `refreshCommitEvery`-th token update committed by a connector child kills its own backend at COMMIT. */
  readonly refreshCommitEvery: number
  /**
   * Share of nodes the emulator leaves out of the first account's pages after paging (`setPagingFaults` withhold: the
   * same nodes every time, line items too, pageInfo and totalCount as paged): its warehouse must equal what it is served.
   */
  readonly withhold: number
  /**
   * Beside the share, a block of this many consecutive records of every collection withheld from the same account
   * (its pages inside the block come back empty); before the final full pass the withheld set moves (another seed and
   * block): records become withheld, others visible again.
   */
  readonly withholdBlock: number
  /**
   * QUEUE_BACKFILLS_AT_ONCE of the backfill pass, fewer than the accounts: backfills wait their turn, and the pass's
   * first SIGKILL waits for the cap full with backfills waiting and kills the worker holding the most accounts.
   */
  readonly backfillCap: number
  /** SIGSTOPs per pass of the worker holding the most accounts, until a live worker holds them all; then SIGCONT. */
  readonly hangsPerPass: { readonly backfill: number; readonly full: number }
  readonly keepSchema?: boolean
}

export const chaosDefaults = (seed: number): ChaosOptions => ({
  seed,
  accounts: 5,
  jobs: 3_000,
  minKills: 10,
  minTerminations: 3,
  killsPerPass: { backfill: 5, sync: 2, full: 2 },
  incrementalSyncs: 2,
  killWindowMs: { backfill: [200, 10_000], sync: [0, 1_500] },
  faults: { errorRate: 0.05, dropRate: 0.02, truncateRate: 0.02, latencyRate: 0.05, latencyMs: 400, seed },
  editsPerPass: 400,
  deletesPerPass: 100,
  // before the first 15 queries of each collection (jobs take 30 pages): the pages, not the closing id listing
  churn: { creates: 1, edits: 2, deletes: 1, queries: 15, collections: ["jobs", "invoices"] },
  refreshCommitEvery: 3,
  withhold: 0.2,
  withholdBlock: 130,
  backfillCap: 2,
  hangsPerPass: { backfill: 1, full: 1 }
})

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface ChaosReport {
  readonly seed: number
  readonly faults: Faults
  readonly faultsInjected: { readonly error: number; readonly drop: number; readonly truncate: number; readonly latency: number }
  readonly kills: number
  readonly terminations: number
  readonly terminatedBackends: number
  readonly attempts: ReadonlyArray<{ readonly pass: string; readonly outcome: string; readonly seconds: number }>
  readonly revoked: string | undefined
  readonly churned: number
  readonly refreshCommitFaults: number
  /** The account whose pages withhold nodes. */
  readonly withheldFrom: string | undefined
  /** SIGSTOPs of a worker: its accounts, and seconds until a live worker held them all (undefined: not within 60 s). */
  readonly hangs: ReadonlyArray<{ readonly pass: string } & Hang>
  /** The SIGKILL made with the backfill cap full: backfills running and waiting, the killed worker's accounts, seconds until each ran again. */
  readonly capKill: { readonly running: number; readonly waiting: number; readonly accounts: number; readonly runAgainSeconds: number | undefined } | undefined
  /** Postgres's write log: writes of the warehouse, checkpoints and runs, and those by a process not holding the account's lease. */
  readonly writeLog: FencedWrites
  readonly checks: ReadonlyArray<Check>
  readonly seconds: number
  readonly ok: boolean
}

const say = (line: string) => Effect.sync(() => process.stderr.write(`chaos: ${line}\n`))

const waitExit = (child: ChildProcess) =>
  Effect.async<{ code: number | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed({ code: child.exitCode }))
    child.once("exit", (code) => resume(Effect.succeed({ code })))
  })

export const runChaos = (options: ChaosOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const started = performance.now()
      const rng: Prng = seeded(options.seed)
      const emulator: EmulatorProcess = yield* startEmulatorProcess({ rotation: true })
      const { admin } = emulator
      // generous buckets: chaos is about faults, not throttling (the budget benchmark covers that)
      yield* admin.setLimits({ maxPoints: 200_000, restoreRate: 200_000, requestLimit: 1e9 })
      const settings = settingsFor(emulator)
      const schema = freshSchemaName("chaos")
      const databaseUrl = benchDatabaseUrl()
      const pgPort = Number(new URL(databaseUrl).port || 5432)
      // the children's sessions carry their own name: the refresh-commit fault kills only theirs
      const env = {
        ...childEnv(settings, databaseUrl, schema),
        DATABASE_APPLICATION_NAME: childSessionName,
        // the whole account: every stream, links, line items and custom fields
        SYNC_STREAMS: "",
        SYNC_EXCLUDE_FIELDS: "",
        // history under every fault: each version exactly once (checked at the end)
        SYNC_HISTORY: "jobs,invoices"
      }
      // the workers' queue timings: failover within seconds (heartbeat 10 s, pg-boss's floor), no cron line firing
      const workerEnv = {
        QUEUE_MONITOR_SECONDS: "2",
        QUEUE_POLL_INTERVAL: "300 millis",
        QUEUE_RETRY_DELAY_SECONDS: "1",
        QUEUE_RETRY_DELAY_MAX_SECONDS: "5",
        QUEUE_RETRY_LIMIT: "20",
        QUEUE_SCHEDULE: "0 0 1 1 *",
        SYNC_INCREMENTAL_EVERY: "1 hour",
        // a hung worker's leases lapse 10 s after its last renewal (30 s by default)
        ACCOUNT_LEASE_SECONDS: "10"
      }
      // the bench's own enqueuing (as serve or the schedule would), its sessions not the children's
      const queueLayer = JobQueueLive({ supervise: false, instanceName: "chaos" }).pipe(
        Layer.provide(JobSettings.layer),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...env, ...workerEnv, DATABASE_APPLICATION_NAME: "account-sync-bench" })))))
      )
      yield* say(`seed ${options.seed}; emulator ${emulator.baseUrl} (pid ${emulator.pid}); schema ${schema}`)

      return yield* Effect.gen(function* () {
        const accountIds: Array<string> = []
        for (let i = 0; i < options.accounts; i++) {
          const a = yield* admin.createAccount({ accountId: uniqueAccountId(), jobs: options.jobs, seed: options.seed * 100 + i })
          accountIds.push(a.accountId)
          yield* connectAccount(a.accountId)
        }
        yield* say(`${options.accounts} accounts x ${options.jobs} jobs connected; faults ${JSON.stringify(options.faults)}`)
        yield* admin.setFaults(options.faults)
        // a service that authorizes each node: pages shorter than first while more follow, for one account
        const withheldFrom = options.withhold > 0 || options.withholdBlock > 0 ? accountIds[0] : undefined
        const withhold = (seed: number) =>
          withheldFrom === undefined
            ? Effect.void
            : admin
                // the block inside the first quarter of the jobs: within every collection but the smallest
                .setPagingFaults({ accountId: withheldFrom, withhold: options.withhold, withholdBlock: options.withholdBlock, blockStart: (seed * 7_919) % Math.max(1, Math.floor(options.jobs / 4)), seed })
                .pipe(
                Effect.zipRight(
                  say(`${withheldFrom}: ${options.withhold * 100}% of the nodes of every page and a block of ${options.withholdBlock} records withheld after paging (seed ${seed})`)
                )
              )
        yield* withhold(options.seed)
        yield* installRefreshCommitFault(options.refreshCommitEvery)
        const logged = yield* installWriteLog(schema)
        yield* say(`write log (Postgres triggers) on ${logged.length} tables and account_leases`)
        const hangs: Array<{ pass: string } & Hang> = []
        let capKill: ChaosReport["capKill"]

        let kills = 0
        let terminations = 0
        let terminatedBackends = 0
        let revoked: string | undefined
        let revokedDone = false
        const attempts: Array<{ pass: string; outcome: string; seconds: number }> = []
        const revokeTarget = accountIds[rng.int(0, accountIds.length - 1)]!

        /** A `worker` child: its sessions are named after childSessionName (the refresh-commit fault and terminations find them). */
        const spawnWorker = (extraEnv: Record<string, string>) => {
          const child = spawn(process.execPath, [...nodeArgs, binPath, "worker", "--concurrency", String(options.accounts)], {
            env: { ...process.env, ...nodeEnv, LOG_LEVEL: "WARN", ...env, ...workerEnv, ...extraEnv },
            stdio: ["ignore", "ignore", "pipe"]
          })
          const worker = { child, stderr: "" }
          child.stderr!.on("data", (c: Buffer) => void (worker.stderr = (worker.stderr + c.toString()).slice(-20_000)))
          return worker
        }
        type WorkerChild = ReturnType<typeof spawnWorker>
        const stopWorker = (w: WorkerChild, signal: NodeJS.Signals) =>
          Effect.suspend(() => {
            if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(signal)
            return waitExit(w.child)
          })

        /**
         * One pass over every account by two workers: a job per account enqueued, the two workers take them; meanwhile
         * one of them, drawn at random, is SIGKILLed at random moments and started again (its accounts fail over to the
         * other), the sessions of one are terminated, one account is revoked. Done when the queue holds no job of the
         * accounts waiting, running or to be retried.
         */
        const pass = (
          name: string,
          job: (accountId: string, at: string) => AccountJob,
          extraEnv: Record<string, string>,
          plannedKills: number,
          window: readonly [number, number],
          last: boolean,
          plannedHangs = 0
        ) =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const t0 = performance.now()
            const lastRunId = (yield* sql<{ m: number | null }>`SELECT max(id)::int AS m FROM sync_runs`)[0]?.m ?? 0
            const at = new Date().toISOString()
            yield* Effect.scoped(Effect.flatMap(JobQueue, (queue) => Effect.forEach(accountIds, (id) => queue.enqueue(job(id, at)), { discard: true })).pipe(Effect.provide(queueLayer)))
            const workers = [spawnWorker(extraEnv), spawnWorker(extraEnv)]
            const drained = Effect.map(
              sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${schema}_queue`)}.job WHERE name = 'account-work' AND state IN ('created', 'retry', 'active')`,
              (r) => r[0]!.n === 0
            )
            // moments are counted from the first run of the pass, not from the workers' start (loading takes seconds)
            yield* sql<{ m: number | null }>`SELECT max(id)::int AS m FROM sync_runs`.pipe(
              Effect.map((rows) => rows[0]?.m ?? 0),
              Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (m) => m > lastRunId }),
              Effect.timeoutOption("60 seconds")
            )
            const runStart = performance.now()
            let passKills = 0
            let passTerminated = 0
            let passRevoked = false
            let passHangs = 0
            const [lo, hi] = window
            for (let round = 0; ; round++) {
              const wantKill = passKills < plannedKills || (last && kills < options.minKills)
              const wantTerminate = terminations < options.minTerminations
              const wantRevoke = name === "backfill" && !revokedDone && kills >= 1
              const wantHang = passHangs < plannedHangs
              const wantCapKill = name === "backfill" && wantKill && capKill === undefined
              const moment = Math.round(rng.between(lo, hi))
              // until the moment (from the run's start, or the last fault), or the queue drained
              const until = (round === 0 ? runStart : performance.now()) + moment
              let done = false
              while (performance.now() < until && !(done = yield* drained)) yield* Effect.sleep("100 millis")
              if (done || (yield* drained)) break
              if (wantRevoke) {
                // a developer-portal Test session kills the account's refresh tokens; an hour later its access
                // token expires too, and the workers meet the revocation at its next refresh
                yield* admin.startSandboxSession({ clientId: emulator.clientId, accountId: revokeTarget })
                yield* admin.advanceClock({ seconds: 3_700 })
                revoked = revokeTarget
                revokedDone = true
                passRevoked = true
              }
              if (wantTerminate) {
                const target = workers[rng.int(0, workers.length - 1)]!
                const n = yield* terminateBackendsOf(target.child.pid!, pgPort, childSessionName)
                if (n > 0) {
                  terminations++
                  terminatedBackends += n
                  passTerminated += n
                }
              }
              if (wantHang) {
                const held = yield* Effect.forEach(workers, (w) => accountsHeldBy(w.child.pid!))
                const i = held[0]!.length >= held[1]!.length ? 0 : 1
                if (held[i]!.length > 0) {
                  // the live worker lands pages for the accounts before the hung one comes back with what it had in flight
                  const hang = yield* hangUntilTaken(workers[i]!.child.pid!, 60, Effect.sleep("2 seconds"))
                  hangs.push({ pass: name, ...hang })
                  passHangs++
                  yield* say(`${name}: worker ${workers[i]!.child.pid} SIGSTOPped holding ${hang.accounts.length} account(s), taken by a live worker after ${hang.releaseSeconds?.toFixed(1) ?? "more than 60"} s, SIGCONT`)
                }
              }
              if (wantCapKill) {
                // the backfill cap full and backfills waiting: the worker holding the most accounts is killed mid-page
                const full = yield* secondsUntil(performance.now(), 60, Effect.map(backfillsUnderCap(`${schema}_queue`), (c) => c.running >= options.backfillCap && c.waiting > 0))
                const cap = yield* backfillsUnderCap(`${schema}_queue`)
                const held = yield* Effect.forEach(workers, (w) => accountsHeldBy(w.child.pid!))
                const i = held[0]!.length >= held[1]!.length ? 0 : 1
                const killedAt = yield* databaseNow
                yield* stopWorker(workers[i]!, "SIGKILL")
                kills++
                passKills++
                workers[i] = spawnWorker(extraEnv)
                const again = held[i]!.length > 0 ? yield* runAgainSeconds(held[i]!, killedAt, 120) : undefined
                if (full !== undefined && held[i]!.length > 0) capKill = { ...cap, accounts: held[i]!.length, runAgainSeconds: again }
                yield* say(
                  `${name}: SIGKILL with ${cap.running} backfill(s) running, ${cap.waiting} waiting (cap ${options.backfillCap}) of the worker holding ${held[i]!.length} account(s); they ran again after ${again?.toFixed(1) ?? "more than 120"} s`
                )
              } else if (wantKill) {
                const i = rng.int(0, workers.length - 1)
                yield* stopWorker(workers[i]!, "SIGKILL")
                kills++
                passKills++
                workers[i] = spawnWorker(extraEnv)
              }
              if (!wantKill && !wantTerminate && !wantRevoke && !wantHang) {
                while (!(yield* drained)) {
                  if (performance.now() - t0 > 900_000) return yield* new BenchError({ step: `chaos ${name}`, reason: `the queue did not drain within 15 minutes: ${lastLines(workers[0]!.stderr)}` })
                  yield* Effect.sleep("200 millis")
                }
                break
              }
            }
            const exits = yield* Effect.forEach(workers, (w) => stopWorker(w, "SIGTERM"))
            const seconds = (performance.now() - t0) / 1000
            attempts.push({ pass: name, outcome: `${passKills} SIGKILL(s), ${passHangs} SIGSTOP(s), exits ${exits.map((e) => e.code).join("/")}`, seconds })
            yield* say(
              `${name}: drained after ${seconds.toFixed(1)} s by two workers, ${passKills} SIGKILL(s), ${passHangs} SIGSTOP(s)` +
                (passTerminated > 0 ? `, ${passTerminated} backend(s) terminated` : "") +
                (passRevoked ? `, sandbox session revoked ${revokeTarget}` : "")
            )
            const unclean = exits.filter((e) => e.code !== 143 && e.code !== 0)
            if (unclean.length > 0) {
              const file = path.join(os.tmpdir(), `chaos-${options.seed}-${attempts.length}.stderr.log`)
              fs.writeFileSync(file, workers.map((w) => w.stderr).join("\n---\n"))
              yield* say(`a worker exited ${unclean.map((e) => e.code).join(", ")} on SIGTERM (stderr in ${file})`)
            }
          })

        const syncJob = (accountId: string, at: string): AccountJob => ({ kind: "sync", accountId, dueAt: at })
        const backfillJob = (accountId: string, at: string): AccountJob => ({ kind: "backfill", accountId, dueAt: at, requestedAt: at, restart: false })

        const editAndDelete = (round: number) =>
          Effect.forEach(
            accountIds,
            (id, i) =>
              Effect.gen(function* () {
                yield* admin.editRecords({ accountId: id, collection: "jobs", count: options.editsPerPass, seed: options.seed * 1000 + round * 10 + i })
                yield* admin.deleteRecords({ accountId: id, collection: "jobs", count: options.deletesPerPass, seed: options.seed * 2000 + round * 10 + i })
                // an updatedAt-filtered stream too, and line items under it
                yield* admin.editRecords({ accountId: id, collection: "invoices", count: Math.ceil(options.editsPerPass / 4), seed: options.seed * 3000 + round * 10 + i })
                yield* admin.deleteRecords({ accountId: id, collection: "invoices", count: Math.ceil(options.deletesPerPass / 4), seed: options.seed * 4000 + round * 10 + i })
                yield* admin.editLineItems({ accountId: id, collection: "invoices", count: 5, add: 1, remove: 1, edit: 1, seed: options.seed * 5000 + round * 10 + i })
              }),
            { discard: true }
          ).pipe(Effect.zipRight(say(`round ${round}: per account ${options.editsPerPass} jobs edited and ${options.deletesPerPass} deleted, a quarter as many invoices, line items of 5 invoices changed`)))

        let churned = 0
        const churnDuring = <A, E, R>(label: string, run: Effect.Effect<A, E, R>) =>
          Effect.gen(function* () {
            yield* admin.setChurn({ ...options.churn, seed: options.seed + churned })
            const result = yield* run.pipe(Effect.ensuring(admin.setChurn({ stop: true }).pipe(Effect.ignore)))
            let n = 0
            for (const id of accountIds) n += (yield* admin.churnLog({ accountId: id })).length
            yield* say(`${label}: ${n - churned} records created, edited or deleted under the pager (offset cursors)`)
            churned = n
            return result
          })
        // access tokens expire after an hour of the emulator's clock: every account refreshes (and rotates) next run
        const expireAccessTokens = admin.advanceClock({ seconds: 3_700 })

        const checks: Array<Check> = []
        let faultPhase = 0
        const compareAll = (label: string, final: boolean) =>
          Effect.gen(function* () {
            yield* admin.setFaults({})
            const sql = yield* SqlClient.SqlClient
            // a full pass resumed by this sync does not go back for edits behind its cursor (the next incremental
            // pass does): mid-way, only accounts whose last completed pass was incremental must be exact
            const lastKinds = yield* sql<{ account_id: string; kind: string }>`
              SELECT DISTINCT ON (account_id) account_id, kind FROM sync_runs WHERE outcome = 'succeeded'
              ORDER BY account_id, id DESC`
            const incremental = new Set(lastKinds.filter((r) => r.kind === "incremental").map((r) => r.account_id))
            const compared = final ? accountIds : accountIds.filter((id) => incremental.has(id))
            // mid-way the jobs (what the incremental syncs are about); at the end every stream of every account
            const streams = final ? allStreams : allStreams.filter((st) => st.name === "jobs")
            const results: Array<StreamComparison & { accountId: string }> = yield* Effect.forEach(compared, (id) =>
              // what the service returns to the app: the withheld nodes of one account left out
              Effect.forEach(streams, (stream) => Effect.map(compareStream(admin, stream, id, emulator.clientId), (c) => ({ ...c, accountId: id })))
            ).pipe(Effect.map((all) => all.flat()))
            // a new fault seed per phase: re-using it would replay the same draws
            faultPhase++
            yield* admin.setFaults({ ...options.faults, seed: (options.faults.seed ?? options.seed) + faultPhase })
            const bad = results.filter(
              (c) => c.missing + c.mismatched + c.wronglyDeleted > 0 || (final && c.stillLive + c.nestedMismatched > 0)
            )
            const rows = results.reduce((n, c) => n + c.serviceRows, 0)
            const pendingDeletes = results.reduce((n, c) => n + c.stillLive, 0)
            if (final) {
              const marked = results.reduce((n, c) => n + c.wronglyDeleted, 0)
              const kept = results.reduce((n, c) => n + c.keptWithheld, 0)
              checks.push({
                name: "deletions missed (live rows whose record the service no longer has) and live rows marked deleted, every stream of every account",
                ok: pendingDeletes === 0 && marked === 0,
                detail: `${pendingDeletes} missed, ${marked} live rows marked deleted; ${kept} rows of records withheld from the app kept live`
              })
            }
            checks.push({
              name: final
                ? "warehouse == emulator for every stream of every account (every mapped column, line items and custom fields per parent, deleted_at correct)"
                : `${label}: every live job landed exactly (deletions wait for the full pass: ${pendingDeletes} pending)`,
              ok: bad.length === 0,
              detail:
                bad.length === 0
                  ? `${rows} live rows of ${streams.length} stream(s) compared over ${compared.length} accounts` +
                    (compared.length < accountIds.length ? ` (${accountIds.length - compared.length} finished a resumed full pass instead)` : "")
                  : bad
                      .map((c) => `${c.accountId} ${c.stream}: missing ${c.missing}, differing ${c.mismatched}, wrongly deleted ${c.wronglyDeleted}, still live ${c.stillLive}, nested ${c.nestedMismatched}; ${c.examples.join("; ")}`)
                      .join(" | ")
            })
          })

        // 1. the backfill under churn, killed and restarted; one account revoked on the way
        yield* churnDuring(
          "backfill",
          pass("backfill", backfillJob, { QUEUE_BACKFILLS_AT_ONCE: String(options.backfillCap) }, options.killsPerPass.backfill, options.killWindowMs.backfill, false, options.hangsPerPass.backfill)
        )
        if (revoked !== undefined) {
          yield* say(`reconnecting ${revoked} through the OAuth flow (faults on: retried as a user would)`)
          yield* connectAccount(revoked).pipe(Effect.retry({ times: 5, schedule: Schedule.spaced("500 millis") }))
        }
        // 2. incremental syncs after edits and deletions
        for (let i = 1; i <= options.incrementalSyncs; i++) {
          yield* editAndDelete(i)
          yield* pass(`sync ${i}`, syncJob, {}, options.killsPerPass.sync, options.killWindowMs.sync, false)
          yield* compareAll(`after sync ${i}`, false)
        }
        // 3. the daily full pass (brought forward) under churn finds the deletions; the withheld set has moved
        yield* withhold(options.seed + 1)
        yield* churnDuring("full pass", pass("full pass", syncJob, { SYNC_FULL_PASS_EVERY: "1 second" }, options.killsPerPass.full, options.killWindowMs.backfill, true, options.hangsPerPass.full))
        // 4. one incremental sync brings what churn edited behind the cursor of a resumed pass; every account's access
        // token has expired, so each refreshes (and rotates) first, and some of those commits lose their session. (Not
        // during the passes above: a SIGKILL between the token endpoint's answer and the write loses a rotation
        // whatever the code does; this fault is about the database session, not the process.)
        yield* expireAccessTokens
        yield* setRefreshCommitFault(true)
        yield* pass("closing sync", syncJob, {}, 0, options.killWindowMs.sync, false)
        yield* setRefreshCommitFault(false)
        const refreshCommitFaults = yield* refreshCommitFaultsInjected(options.refreshCommitEvery)

        yield* admin.setFaults({})
        const stats = yield* admin.stats()
        yield* compareAll("final", true)

        const connections = yield* Connections
        const store = yield* TokenStore
        const all = yield* connections.list()
        const inactive = all.filter((c) => c.status !== "active")
        checks.push({
          name: "every account is active again (the revoked one reconnected)",
          ok: inactive.length === 0 && all.length === accountIds.length,
          detail: inactive.length === 0 ? `${all.length} active` : inactive.map((c) => `${c.accountId}: ${c.status} ${c.statusReason ?? ""}`).join("; ")
        })
        const rejected: Array<string> = []
        for (const c of all.filter((c) => c.status === "active")) {
          const stored = yield* store.read(c.accountId)
          const token = Option.flatMap(stored, (s) => s.refreshToken)
          const ok = Option.isSome(token) ? yield* admin.isRefreshTokenValid({ clientId: emulator.clientId, refreshToken: Redacted.value(token.value) }) : false
          if (!ok) rejected.push(c.accountId)
        }
        checks.push({
          name: "the stored refresh token of every active account is the one the emulator accepts (no rotation lost)",
          ok: rejected.length === 0,
          detail: rejected.length === 0 ? `${all.length} accepted (${stats.tokenRequests.refresh_token} refreshes)` : `rejected: ${rejected.join(", ")}`
        })
        const sql = yield* SqlClient.SqlClient
        const open = yield* sql<{ n: number; total: number; interrupted: number }>`
          SELECT count(*) FILTER (WHERE outcome = 'running' OR finished_at IS NULL)::int AS n, count(*)::int AS total,
                 count(*) FILTER (WHERE outcome = 'interrupted')::int AS interrupted FROM sync_runs`
        checks.push({
          name: "every sync_runs row has a final outcome (none left 'running')",
          ok: open[0]!.n === 0,
          detail: `${open[0]!.total} runs, ${open[0]!.interrupted} closed as interrupted, ${open[0]!.n} still running`
        })
        const overlaps = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM sync_runs a JOIN sync_runs b ON a.account_id = b.account_id AND a.id < b.id
          WHERE a.outcome <> 'skipped' AND b.outcome <> 'skipped'
            AND b.started_at < COALESCE(a.finished_at, now()) AND a.started_at < COALESCE(b.finished_at, now())`
        checks.push({ name: "no account had two runs at once (sync_runs intervals of an account never overlap)", ok: overlaps[0]!.n === 0, detail: `${overlaps[0]!.n} overlapping pair(s)` })
        const writeLog = yield* countFencedWrites
        checks.push({
          name: "no write by a fenced worker: Postgres's write log has no write of the warehouse, checkpoints or runs committed while another process held the account's lease",
          ok: writeLog.writes > 0 && writeLog.takes > 0 && writeLog.fenced + writeLog.unleased === 0,
          detail:
            `${writeLog.fenced} by a fenced worker, ${writeLog.unleased} with no lease taken, of ${writeLog.writes} write statements; ${writeLog.takes} lease takes` +
            (writeLog.examples.length > 0 ? `; ${writeLog.examples.join("; ")}` : "")
        })
        const plannedHangs = options.hangsPerPass.backfill + options.hangsPerPass.full
        checks.push({
          name: `at least ${plannedHangs} SIGSTOPs of a worker holding accounts, each time a live worker held them all within 60 s, then SIGCONT`,
          ok: hangs.length >= plannedHangs && hangs.every((h) => h.releaseSeconds !== undefined && h.releaseSeconds <= 60),
          detail: hangs.length === 0 ? "none" : hangs.map((h) => `${h.pass}: ${h.accounts.length} account(s) in ${h.releaseSeconds?.toFixed(1) ?? "more than 60"} s`).join(", ")
        })
        checks.push({
          name: `a SIGKILL of a worker holding backfills with the cap (${options.backfillCap}) full and backfills waiting: each of its accounts ran again within 30 s`,
          ok: capKill !== undefined && capKill.runAgainSeconds !== undefined && capKill.runAgainSeconds <= 30,
          detail:
            capKill === undefined
              ? "the cap was never full with backfills waiting at a kill"
              : `${capKill.running} running, ${capKill.waiting} waiting; ${capKill.accounts} account(s) ran again after ${capKill.runAgainSeconds?.toFixed(1) ?? "more than 120"} s`
        })
        for (const [table, keys] of [["jobs", ["account_id", "id"]], ["job_line_items", ["account_id", "id"]], ["invoices", ["account_id", "id"]], ["invoice_line_items", ["account_id", "id"]]] as const) {
          const h = yield* checkHistory(sql, table, keys)
          checks.push({
            name: `${table}_history: every live row has exactly its open version, no deleted row one, no version written twice, none overlapping`,
            ok: h.versions > 0 && h.liveWithoutItsVersion + h.deletedStillOpen + h.repeated + h.broken === 0,
            detail: `${h.versions} versions; ${h.liveWithoutItsVersion} live rows without their version, ${h.deletedStillOpen} deleted still open, ${h.repeated} repeated, ${h.broken} overlapping or with a gap`
          })
        }
        const dead = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${schema}_queue`)}.job WHERE name = 'account-work-dead'`
        checks.push({ name: "no job failed for good (dead letters)", ok: dead[0]!.n === 0, detail: `${dead[0]!.n} dead-lettered` })
        checks.push({ name: `at least ${options.minKills} SIGKILLs of a worker`, ok: kills >= options.minKills, detail: `${kills}` })
        checks.push({
          name: `at least ${options.minTerminations} pg_terminate_backend rounds on a worker's sessions`,
          ok: terminations >= options.minTerminations,
          detail: `${terminations} rounds, ${terminatedBackends} backends terminated`
        })
        checks.push({ name: "an account was revoked mid-run and reconnected", ok: revoked !== undefined, detail: revoked ?? "never revoked" })
        checks.push({ name: "records changed under the pager during the backfill and the full pass", ok: churned > 0, detail: `${churned} changes` })
        checks.push({
          name: "refresh commits lost their session (backend terminated at COMMIT), the rotated tokens kept",
          ok: refreshCommitFaults > 0,
          detail: `${refreshCommitFaults} commits killed (${stats.tokenRequests.refresh_token} refreshes)`
        })
        const injected = stats.faultsInjected
        checks.push({
          name: "faults were injected (5xx, drops, truncated bodies, latency)",
          ok: injected.error > 0 && injected.drop > 0 && injected.truncate > 0 && injected.latency > 0,
          detail: JSON.stringify(injected)
        })
        return {
          seed: options.seed,
          faults: options.faults,
          faultsInjected: injected,
          kills,
          terminations,
          terminatedBackends,
          attempts,
          revoked,
          churned,
          refreshCommitFaults,
          withheldFrom,
          hangs,
          capKill,
          writeLog,
          checks,
          seconds: (performance.now() - started) / 1000,
          ok: checks.every((c) => c.ok)
        } satisfies ChaosReport
      }).pipe(
        Effect.scoped,
        Effect.provide(connectorLayer({ settings, schema, keepSchema: options.keepSchema })),
        Effect.mapError((e) => (e instanceof BenchError ? e : new BenchError({ step: "chaos", reason: String((e as { message?: string })?.message ?? e) })))
      )
    })
  )


const childSessionName = "account-sync-chaos-child"

/**
 * The refresh-commit fault: every `every`-th update of a token row by a connector child kills its own backend at
 * COMMIT (a deferred constraint trigger), so the rotated refresh token the service already issued meets a lost session.
 */
const installRefreshCommitFault = (every: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`
      CREATE SEQUENCE IF NOT EXISTS chaos_token_commits;
      CREATE TABLE IF NOT EXISTS chaos_refresh_commit_fault (on_ boolean NOT NULL);
      INSERT INTO chaos_refresh_commit_fault SELECT false WHERE NOT EXISTS (SELECT 1 FROM chaos_refresh_commit_fault);
      CREATE OR REPLACE FUNCTION chaos_kill_token_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE n bigint;
      BEGIN
        IF current_setting('application_name') NOT LIKE '${childSessionName}%' OR NOT (SELECT on_ FROM chaos_refresh_commit_fault) THEN RETURN NULL; END IF;
        n := nextval('chaos_token_commits');
        IF n % ${every} = 1 THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
          PERFORM pg_sleep(10);
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER IF EXISTS chaos_kill_token_commit ON oauth_tokens;
      CREATE CONSTRAINT TRIGGER chaos_kill_token_commit AFTER UPDATE ON oauth_tokens
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chaos_kill_token_commit();`)
  })

const setRefreshCommitFault = (on: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE chaos_refresh_commit_fault SET on_ = ${on}`)

/** Kills so far: of the token commits the sequence counted (a sequence is not rolled back), those whose turn was a kill. */
const refreshCommitFaultsInjected = (every: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: string | null }>`SELECT CASE WHEN is_called THEN last_value END AS n FROM chaos_token_commits`
    const commits = Number(rows[0]?.n ?? 0)
    return commits === 0 ? 0 : Math.floor((commits - 1) / every) + 1
  })

const lastLines = (stderr: string) =>
  stderr
    .trim()
    .split("\n")
    .slice(-3)
    .map((l) => l.slice(0, 300))
    .join(" / ")

export const renderChaos = (r: ChaosReport): string =>
  [
    `seed ${r.seed}`,
    `faults requested: ${JSON.stringify(r.faults)}`,
    `faults injected: ${JSON.stringify(r.faultsInjected)}`,
    `connector SIGKILLs: ${r.kills}; pg_terminate_backend rounds: ${r.terminations} (${r.terminatedBackends} backends); revoked and reconnected: ${r.revoked ?? "none"}`,
    `records changed under the pager: ${r.churned}; refresh commits killed: ${r.refreshCommitFaults}`,
    `nodes withheld from the pages of: ${r.withheldFrom ?? "none"}`,
    `SIGSTOPs: ${r.hangs.map((h) => `${h.pass} ${h.accounts.length} account(s) taken in ${h.releaseSeconds?.toFixed(1) ?? "-"} s`).join(", ") || "none"}; ` +
      `SIGKILL with the backfill cap full: ${r.capKill === undefined ? "none" : `${r.capKill.running} running, ${r.capKill.waiting} waiting, ran again in ${r.capKill.runAgainSeconds?.toFixed(1) ?? "-"} s`}`,
    `write log: ${r.writeLog.writes} write statements, ${r.writeLog.takes} lease takes, ${r.writeLog.fenced} writes by a fenced worker, ${r.writeLog.unleased} unleased`,
    `attempts: ${r.attempts.length} (${r.attempts.map((a) => `${a.pass}: ${a.outcome}`).join(", ")})`,
    ...r.checks.map((c) => `${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`),
    `${r.ok ? "PASS" : "FAIL"} in ${r.seconds.toFixed(0)} s`
  ].join("\n")

import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted, Schedule } from "effect"
import { Connections } from "../../src/auth/Connections.js"
import { TokenStore } from "../../src/auth/TokenStore.js"
import type { AccountJob } from "../../src/jobs/JobKinds.js"
import { uniqueAccountId } from "./benchAccounts.js"
import { checkHistory } from "./historyCheck.js"
import { childEnv, connectAccount, connectorLayer, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { type EmulatorProcess, startEmulatorProcess } from "./emulatorProcess.js"
import { type Prng, seeded } from "./prng.js"
import type { Hang } from "./workerFaults.js"
import { countFencedWrites, installWriteLog } from "./writeLog.js"
import type { ChaosOptions } from "./chaosOptions.js"
import { type ChaosReport, type Check, say } from "./chaosReport.js"
import { childSessionName, installRefreshCommitFault, refreshCommitFaultsInjected, setRefreshCommitFault } from "./chaosRefreshFault.js"
import { chaosComparer } from "./chaosCompare.js"
import { chaosPasses, type FaultTally } from "./chaosPass.js"

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
        const state: FaultTally = { kills: 0, terminations: 0, terminatedBackends: 0, revoked: undefined, revokedDone: false, capKill: undefined }
        const attempts: Array<{ pass: string; outcome: string; seconds: number }> = []
        const revokeTarget = accountIds[rng.int(0, accountIds.length - 1)]!
        const pass = chaosPasses({ options, emulator, env, workerEnv, schema, pgPort, accountIds, rng, hangs, attempts, revokeTarget, state })

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
        const compareAll = chaosComparer(emulator, accountIds, options, checks)

        // 1. the backfill under churn, killed and restarted; one account revoked on the way
        yield* churnDuring(
          "backfill",
          pass("backfill", backfillJob, { QUEUE_BACKFILLS_AT_ONCE: String(options.backfillCap) }, options.killsPerPass.backfill, options.killWindowMs.backfill, false, options.hangsPerPass.backfill)
        )
        if (state.revoked !== undefined) {
          yield* say(`reconnecting ${state.revoked} through the OAuth flow (faults on: retried as a user would)`)
          yield* connectAccount(state.revoked).pipe(Effect.retry({ times: 5, schedule: Schedule.spaced("500 millis") }))
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
        const { kills, terminations, terminatedBackends, revoked, capKill } = state

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
          detail: hangs.length === 0 ? "none" : hangs.map((h) => `${h.pass}: ${h.accounts.length} account(s) in ${h.releaseSeconds?.toFixed(1) ?? "more than 60"} s${h.stall ? ` (then: ${h.stall})` : ""}`).join(", ")
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

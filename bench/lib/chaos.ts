import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Fiber, Option, Redacted, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Connections } from "../../src/auth/Connections.js"
import { TokenStore } from "../../src/auth/TokenStore.js"
import type { Faults } from "../../src/emulator/EmulatorAdmin.js"
import { terminateBackendsOf } from "./backends.js"
import { uniqueAccountId } from "./benchmarks.js"
import { allStreams } from "../../src/sync/streams/index.js"
import { compareStream, type StreamComparison } from "../../src/demo/exactness.js"
import { childEnv, connectAccount, connectorLayer, settingsFor } from "./connector.js"
import { benchDatabaseUrl, freshSchemaName } from "./database.js"
import { BenchError } from "./errors.js"
import { binPath, type EmulatorProcess, startEmulatorProcess } from "./emulatorProcess.js"
import { type Prng, seeded } from "./prng.js"

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
  refreshCommitEvery: 3
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
  readonly checks: ReadonlyArray<Check>
  readonly seconds: number
  readonly ok: boolean
}

const say = (line: string) => Effect.sync(() => process.stderr.write(`chaos: ${line}\n`))

interface AttemptPlan {
  readonly killAtMs?: number
  readonly terminateAtMs?: number
  readonly revokeAtMs?: number
}

interface AttemptResult {
  readonly code: number | null
  readonly killed: boolean
  readonly terminated: number
  readonly revoked: boolean
  readonly stderr: string
  readonly seconds: number
}

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
        SYNC_EXCLUDE_FIELDS: ""
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
        yield* installRefreshCommitFault(options.refreshCommitEvery)

        let kills = 0
        let terminations = 0
        let terminatedBackends = 0
        let revoked: string | undefined
        let revokedDone = false
        const attempts: Array<{ pass: string; outcome: string; seconds: number }> = []
        const revokeTarget = accountIds[rng.int(0, accountIds.length - 1)]!

        const attempt = (args: ReadonlyArray<string>, extraEnv: Record<string, string>, plan: AttemptPlan) =>
          Effect.gen(function* () {
            const t0 = performance.now()
            const sql = yield* SqlClient.SqlClient
            const lastRunId = (yield* sql<{ m: number | null }>`SELECT max(id)::int AS m FROM sync_runs`)[0]?.m ?? 0
            const child = spawn(process.execPath, [binPath, ...args], {
              env: { ...process.env, LOG_LEVEL: "WARN", ...env, ...extraEnv },
              stdio: ["ignore", "ignore", "pipe"]
            })
            let stderr = ""
            child.stderr!.on("data", (c: Buffer) => void (stderr = (stderr + c.toString()).slice(-20_000)))
            let killed = false
            let terminated = 0
            let didRevoke = false
            const fibers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
            let killer: Fiber.RuntimeFiber<void> | undefined
            // moments are counted from the child's first sync_runs row, not from its start (loading takes seconds)
            const runStarted = yield* Deferred.make<void>()
            const watcher = yield* Effect.fork(
              sql<{ m: number | null }>`SELECT max(id)::int AS m FROM sync_runs`.pipe(
                Effect.map((rows) => rows[0]?.m ?? 0),
                Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (m) => m > lastRunId }),
                Effect.zipRight(Deferred.succeed(runStarted, undefined)),
                Effect.ignore
              )
            )
            const after = (ms: number) => Deferred.await(runStarted).pipe(Effect.zipRight(Effect.sleep(ms)))
            if (plan.terminateAtMs !== undefined) {
              fibers.push(
                yield* Effect.fork(
                  Effect.gen(function* () {
                    yield* after(plan.terminateAtMs!)
                    // poll until the child holds sessions (it may still be starting)
                    const n = yield* Effect.gen(function* () {
                      for (;;) {
                        const terminatedNow = yield* terminateBackendsOf(child.pid!, pgPort, childSessionName)
                        if (terminatedNow > 0) return terminatedNow
                        yield* Effect.sleep("200 millis")
                      }
                    }).pipe(Effect.timeoutOption("10 seconds"))
                    terminated = Option.getOrElse(n, () => 0)
                  }).pipe(Effect.ignore)
                )
              )
            }
            if (plan.revokeAtMs !== undefined) {
              fibers.push(
                yield* Effect.fork(
                  Effect.gen(function* () {
                    yield* after(plan.revokeAtMs!)
                    // a developer-portal Test session kills the account's refresh tokens; an hour later its access
                    // token expires too, and the connector meets the revocation at its next refresh
                    yield* admin.startSandboxSession({ clientId: emulator.clientId, accountId: revokeTarget })
                    yield* admin.advanceClock({ seconds: 3_700 })
                    didRevoke = true
                  }).pipe(Effect.ignore)
                )
              )
            }
            if (plan.killAtMs !== undefined) {
              killer = yield* Effect.fork(
                after(plan.killAtMs).pipe(
                  Effect.zipRight(
                    Effect.sync(() => {
                      if (child.exitCode === null && child.signalCode === null) {
                        killed = true
                        child.kill("SIGKILL")
                      }
                    })
                  )
                )
              )
            }
            const { code } = yield* waitExit(child).pipe(Effect.onInterrupt(() => Effect.sync(() => void child.kill("SIGKILL"))))
            // a revocation or termination under way finishes before the next attempt starts
            if (killer) yield* Fiber.interrupt(killer)
            yield* Fiber.interrupt(watcher)
            // a revocation or termination under way finishes before the next attempt starts (or never started)
            for (const f of fibers) yield* Fiber.await(f).pipe(Effect.timeoutOption("1 second"))
            for (const f of fibers) yield* Fiber.interrupt(f)
            return { code, killed, terminated, revoked: didRevoke, stderr, seconds: (performance.now() - t0) / 1000 } satisfies AttemptResult
          })

        /** Accounts are done for this pass when the child exits 0, or 3 with only the revoked account to reconnect. */
        const complete = (r: AttemptResult) =>
          !r.killed && (r.code === 0 || (r.code === 3 && revoked !== undefined)) && !/skipped:|failed:/.test(r.stderr)

        const pass = (
          name: string,
          args: ReadonlyArray<string>,
          extraEnv: Record<string, string>,
          plannedKills: number,
          window: readonly [number, number],
          last: boolean
        ) =>
          Effect.gen(function* () {
            let passKills = 0
            const [lo, hi] = window
            for (let n = 1; ; n++) {
              const wantKill = passKills < plannedKills || (last && kills < options.minKills)
              const killAtMs = wantKill ? Math.round(rng.between(lo, hi)) : undefined
              const wantTerminate = terminations < options.minTerminations
              const terminateAtMs = wantTerminate ? Math.round(rng.between(0, (killAtMs ?? hi) * 0.8)) : undefined
              const wantRevoke = name === "backfill" && !revokedDone && kills >= 1
              const revokeAtMs = wantRevoke ? Math.round(rng.between(0, (killAtMs ?? hi) * 0.8)) : undefined
              const r = yield* attempt(args, extraEnv, {
                ...(killAtMs !== undefined ? { killAtMs } : {}),
                ...(terminateAtMs !== undefined ? { terminateAtMs } : {}),
                ...(revokeAtMs !== undefined ? { revokeAtMs } : {})
              })
              if (r.killed) {
                kills++
                passKills++
              }
              if (r.terminated > 0) {
                terminations++
                terminatedBackends += r.terminated
              }
              if (r.revoked) {
                revoked = revokeTarget
                revokedDone = true
              }
              const outcome = r.killed ? "SIGKILL" : `exit ${r.code}`
              attempts.push({ pass: name, outcome, seconds: r.seconds })
              if (!r.killed && r.code !== 0) {
                const file = path.join(os.tmpdir(), `chaos-${options.seed}-${attempts.length}.stderr.log`)
                fs.writeFileSync(file, r.stderr)
              }
              yield* say(
                `${name} #${n}: ${outcome} after ${r.seconds.toFixed(1)} s` +
                  (r.terminated > 0 ? `, ${r.terminated} backend(s) terminated` : "") +
                  (r.revoked ? `, sandbox session revoked ${revokeTarget}` : "") +
                  (!r.killed && r.code !== 0 ? ` (${lastLines(r.stderr)})` : "")
              )
              if (complete(r)) return
              if (n > 60) return yield* new BenchError({ step: `chaos ${name}`, reason: `no completed run after 60 attempts: ${lastLines(r.stderr)}` })
            }
          })

        const editAndDelete = (round: number) =>
          Effect.forEach(
            accountIds,
            (id, i) =>
              Effect.gen(function* () {
                yield* admin.editJobs({ accountId: id, count: options.editsPerPass, seed: options.seed * 1000 + round * 10 + i })
                yield* admin.deleteJobs({ accountId: id, count: options.deletesPerPass, seed: options.seed * 2000 + round * 10 + i })
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
              Effect.forEach(streams, (stream) => Effect.map(compareStream(admin, stream, id), (c) => ({ ...c, accountId: id })))
            ).pipe(Effect.map((all) => all.flat()))
            // a new fault seed per phase: re-using it would replay the same draws
            faultPhase++
            yield* admin.setFaults({ ...options.faults, seed: (options.faults.seed ?? options.seed) + faultPhase })
            const bad = results.filter(
              (c) => c.missing + c.mismatched + c.wronglyDeleted > 0 || (final && c.stillLive + c.nestedMismatched > 0)
            )
            const rows = results.reduce((n, c) => n + c.serviceRows, 0)
            const pendingDeletes = results.reduce((n, c) => n + c.stillLive, 0)
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
        yield* churnDuring("backfill", pass("backfill", ["backfill"], {}, options.killsPerPass.backfill, options.killWindowMs.backfill, false))
        if (revoked !== undefined) {
          yield* say(`reconnecting ${revoked} through the OAuth flow (faults on: retried as a user would)`)
          yield* connectAccount(revoked).pipe(Effect.retry({ times: 5, schedule: Schedule.spaced("500 millis") }))
        }
        // 2. incremental syncs after edits and deletions
        for (let i = 1; i <= options.incrementalSyncs; i++) {
          yield* editAndDelete(i)
          yield* pass(`sync ${i}`, ["sync"], {}, options.killsPerPass.sync, options.killWindowMs.sync, false)
          yield* compareAll(`after sync ${i}`, false)
        }
        // 3. the daily full pass (brought forward) under churn finds the deletions
        yield* churnDuring("full pass", pass("full pass", ["sync"], { SYNC_FULL_PASS_EVERY: "1 second" }, options.killsPerPass.full, options.killWindowMs.backfill, true))
        // 4. one incremental sync brings what churn edited behind the cursor of a resumed pass; every account's access
        // token has expired, so each refreshes (and rotates) first, and some of those commits lose their session. (Not
        // during the passes above: a SIGKILL between the token endpoint's answer and the write loses a rotation
        // whatever the code does; this fault is about the database session, not the process.)
        yield* expireAccessTokens
        yield* setRefreshCommitFault(true)
        yield* pass("closing sync", ["sync"], {}, 0, options.killWindowMs.sync, false)
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
        checks.push({ name: `at least ${options.minKills} SIGKILLs of the connector`, ok: kills >= options.minKills, detail: `${kills}` })
        checks.push({
          name: `at least ${options.minTerminations} pg_terminate_backend rounds on the connector's sessions`,
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
        IF current_setting('application_name') <> '${childSessionName}' OR NOT (SELECT on_ FROM chaos_refresh_commit_fault) THEN RETURN NULL; END IF;
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
    `attempts: ${r.attempts.length} (${r.attempts.map((a) => `${a.pass}: ${a.outcome}`).join(", ")})`,
    ...r.checks.map((c) => `${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`),
    `${r.ok ? "PASS" : "FAIL"} in ${r.seconds.toFixed(0)} s`
  ].join("\n")

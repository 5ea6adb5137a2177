import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { AccountJob } from "../../src/jobs/JobKinds.js"
import { JobQueue, JobQueueLive } from "../../src/jobs/JobQueue.js"
import { JobSettings } from "../../src/jobs/JobSettings.js"
import { terminateBackendsOf } from "./backends.js"
import type { ChaosOptions } from "./chaosOptions.js"
import { childSessionName } from "./chaosRefreshFault.js"
import { type ChaosReport, lastLines, say } from "./chaosReport.js"
import type { Env } from "./connector.js"
import { BenchError } from "./errors.js"
import { binPath, nodeArgs, nodeEnv, type EmulatorProcess } from "./emulatorProcess.js"
import type { Prng } from "./prng.js"
import { accountsHeldBy, backfillsUnderCap, databaseNow, type Hang, hangUntilTaken, runAgainSeconds, secondsUntil, stallSnapshot, whyNotRunAgain, withWorkLeft } from "./workerFaults.js"

const waitExit = (child: ChildProcess) =>
  Effect.async<{ code: number | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed({ code: child.exitCode }))
    child.once("exit", (code) => resume(Effect.succeed({ code })))
  })


/** The faults made so far over the passes (read by the checks at the end). */
export interface FaultTally {
  kills: number
  terminations: number
  terminatedBackends: number
  revoked: string | undefined
  revokedDone: boolean
  capKill: ChaosReport["capKill"]
}

/** The passes of runChaos over its accounts, by `worker` children it starts, kills, stops and terminates. */
export const chaosPasses = (ctx: {
  readonly options: ChaosOptions
  readonly emulator: EmulatorProcess
  readonly env: Env
  readonly workerEnv: Env
  readonly schema: string
  readonly pgPort: number
  readonly accountIds: ReadonlyArray<string>
  readonly rng: Prng
  readonly hangs: Array<{ pass: string } & Hang>
  readonly attempts: Array<{ pass: string; outcome: string; seconds: number }>
  readonly revokeTarget: string
  readonly state: FaultTally
}) => {
  const { options, emulator, env, workerEnv, schema, pgPort, accountIds, rng, hangs, attempts, revokeTarget, state } = ctx
  const { admin } = emulator
  // the bench's own enqueuing (as serve or the schedule would), its sessions not the children's
  const queueLayer = JobQueueLive({ supervise: false, instanceName: "chaos" }).pipe(
    Layer.provide(JobSettings.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...env, ...workerEnv, DATABASE_APPLICATION_NAME: "account-sync-bench" })))))
  )

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
        const wantKill = passKills < plannedKills || (last && state.kills < options.minKills)
        const wantTerminate = state.terminations < options.minTerminations
        const wantHang = passHangs < plannedHangs
        const wantCapKill = name === "backfill" && wantKill && state.capKill === undefined
        const moment = Math.round(rng.between(lo, hi))
        // until the moment (from the run's start, or the last fault), or the queue drained
        const until = (round === 0 ? runStart : performance.now()) + moment
        let done = false
        while (performance.now() < until && !(done = yield* drained)) yield* Effect.sleep("100 millis")
        if (done || (yield* drained)) break
        // the faults in the order their moments allow: the cap full with a backfill waiting only at the pass's start,
        // then the revocation (after a kill), the terminations, and last the hang, which waits out a lease (with the
        // hang first, a loaded machine finished the backfills while it lasted, and the cap kill found the cap empty)
        if (wantCapKill) {
          // the backfill cap full and backfills waiting: the worker holding the most accounts is killed mid-page
          const full = yield* secondsUntil(performance.now(), 60, Effect.map(backfillsUnderCap(`${schema}_queue`), (c) => c.running >= options.backfillCap && c.waiting > 0))
          const cap = yield* backfillsUnderCap(`${schema}_queue`)
          const held = yield* Effect.forEach(workers, (w) => accountsHeldBy(w.child.pid!))
          const i = held[0]!.length >= held[1]!.length ? 0 : 1
          const killedAt = yield* databaseNow
          yield* stopWorker(workers[i]!, "SIGKILL")
          state.kills++
          passKills++
          workers[i] = spawnWorker(extraEnv)
          // an account whose work ended as the kill came has nothing to run again
          const unfinished = yield* withWorkLeft(`${schema}_queue`, held[i]!)
          const again = unfinished.length > 0 ? yield* runAgainSeconds(unfinished, killedAt, 120) : undefined
          if (full !== undefined && unfinished.length > 0) state.capKill = { ...cap, accounts: unfinished.length, runAgainSeconds: again }
          if (again === undefined && unfinished.length > 0) yield* say(`${name}: not run again after the SIGKILL: ${yield* whyNotRunAgain(`${schema}_queue`, unfinished, killedAt)}`)
          yield* say(
            `${name}: SIGKILL with ${cap.running} backfill(s) running, ${cap.waiting} waiting (cap ${options.backfillCap}) of the worker holding ${held[i]!.length} account(s), ${unfinished.length} unfinished; they ran again after ${again?.toFixed(1) ?? (unfinished.length > 0 ? "more than 120" : "-")} s`
          )
        } else if (wantKill) {
          const i = rng.int(0, workers.length - 1)
          yield* stopWorker(workers[i]!, "SIGKILL")
          state.kills++
          passKills++
          workers[i] = spawnWorker(extraEnv)
        }
        const wantRevoke = name === "backfill" && !state.revokedDone && state.kills >= 1
        if (wantRevoke) {
          // a developer-portal Test session kills the account's refresh tokens; an hour later its access
          // token expires too, and the workers meet the revocation at its next refresh
          yield* admin.startSandboxSession({ clientId: emulator.clientId, accountId: revokeTarget })
          yield* admin.advanceClock({ seconds: 3_700 })
          state.revoked = revokeTarget
          state.revokedDone = true
          passRevoked = true
        }
        if (wantTerminate) {
          const target = workers[rng.int(0, workers.length - 1)]!
          const n = yield* terminateBackendsOf(target.child.pid!, pgPort, childSessionName)
          if (n > 0) {
            state.terminations++
            state.terminatedBackends += n
            passTerminated += n
          }
        }
        if (wantHang) {
          const held = yield* Effect.forEach(workers, (w) => accountsHeldBy(w.child.pid!))
          const i = held[0]!.length >= held[1]!.length ? 0 : 1
          if (held[i]!.length > 0) {
            // the live worker lands pages for the accounts before the hung one comes back with what it had in flight
            const stoppedAt = yield* databaseNow
            // not taken in time: the accounts' jobs and leases, the workers' sessions and the queue's monitor, read while
            // the worker is still stopped
            const stalled = (accounts: ReadonlyArray<string>) =>
              Effect.zipWith(whyNotRunAgain(`${schema}_queue`, accounts, stoppedAt), stallSnapshot(`${schema}_queue`), (why, sessions) => `${why}\n  ${sessions}`)
            const hang = yield* hangUntilTaken(workers[i]!.child.pid!, 60, Effect.sleep("2 seconds"), stalled)
            hangs.push({ pass: name, ...hang })
            passHangs++
            if (hang.stall !== undefined) yield* say(`${name}: not taken from the SIGSTOPped worker: ${hang.stall}\n  live worker: ${lastLines(workers[1 - i]!.stderr)}`)
            yield* say(`${name}: worker ${workers[i]!.child.pid} SIGSTOPped holding ${hang.accounts.length} account(s), taken by a live worker after ${hang.releaseSeconds?.toFixed(1) ?? "more than 60"} s, SIGCONT`)
          }
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
  return pass
}

import type { SqlError } from "@effect/sql"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { EventQueue } from "../changes/EventQueue.js"
import { type AccountReport, SyncRunner } from "../run/SyncRunner.js"
import { selectStreams, SyncSettings } from "../sync/SyncSettings.js"
import type { AccountJob } from "./JobKinds.js"

/** How a job's work on its account ended (a slice that ran out is the worker's to see: the work is interrupted). */
export type WorkOutcome =
  | { readonly _tag: "Done"; readonly summary: string }
  /** Another process holds the account (a one-shot `sync` beside the workers): the job comes back after `after`. */
  | { readonly _tag: "Later"; readonly after: Duration.Duration; readonly why: string }
  /** pg-boss retries it with backoff, then keeps it in the dead letters. */
  | { readonly _tag: "Failed"; readonly reason: string }

/** Runs one job's work on its account through the engine's own entry points (SyncRunner, EventConsumer). */
export class AccountWork extends Context.Tag("account-sync/AccountWork")<AccountWork, { readonly run: (job: AccountJob) => Effect.Effect<WorkOutcome, SqlError.SqlError> }>() {}

/** A locked account is tried again after this. */
const lockedRetry = Duration.seconds(5)

const outcomeOf = (report: AccountReport | undefined): WorkOutcome => {
  if (report === undefined) return { _tag: "Done", summary: "nothing to run" }
  switch (report.outcome) {
    case "synced":
      return { _tag: "Done", summary: `synced (${report.streams.map((s) => `${s.stream} ${s.kind} ${s.outcome}`).join(", ")})` }
    case "needs-reconnect":
      return { _tag: "Done", summary: `needs reconnecting: ${report.message ?? ""}` }
    case "skipped":
      return { _tag: "Later", after: lockedRetry, why: report.message ?? "locked" }
    case "failed":
      // an account that is gone is not retried
      return report.message === "no such connected account" ? { _tag: "Done", summary: report.message } : { _tag: "Failed", reason: report.message ?? "failed" }
  }
}

export const AccountWorkLive = Layer.effect(
  AccountWork,
  Effect.gen(function* () {
    const runner = yield* SyncRunner
    const consumer = yield* EventConsumer
    const checkpoints = yield* Checkpoints
    const settings = yield* SyncSettings
    const events = yield* EventQueue

    const only = (reports: ReadonlyArray<AccountReport>, accountId: string) => reports.find((r) => r.accountId === accountId)

    /**
     * A backfill's streams still to do: those whose full pass finished after the backfill was asked for are done (a
     * follow-up or a retry skips them); `restart` forgets only a pass begun before the request, never the one this
     * backfill began (a retry after a crash resumes it).
     */
    const backfill = (job: Extract<AccountJob, { kind: "backfill" }>) =>
      Effect.gen(function* () {
        const requestedAt = Date.parse(job.requestedAt)
        const restart: Array<string> = []
        const resume: Array<string> = []
        for (const stream of selectStreams(settings, job.streams)) {
          const c = yield* checkpoints.read(job.accountId, stream.name)
          const checkpoint = c._tag === "Some" ? c.value : undefined
          if (checkpoint?.lastFullPassAt && checkpoint.lastFullPassAt.getTime() >= requestedAt && checkpoint.passKind !== "full") continue
          const begunByThis = checkpoint?.passKind === "full" && (checkpoint.passStartedAt?.getTime() ?? 0) >= requestedAt
          ;(job.restart && !begunByThis ? restart : resume).push(stream.name)
        }
        const reports: Array<AccountReport> = []
        for (const [streams, restarting] of [[restart, true], [resume, false]] as const) {
          if (streams.length === 0) continue
          const report = only(yield* runner.run({ mode: "backfill", accounts: [job.accountId], streams, restart: restarting, concurrency: 1 }), job.accountId)
          if (report !== undefined) reports.push(report)
          if (report !== undefined && report.outcome !== "synced") return outcomeOf(report)
        }
        return reports.length === 0 ? ({ _tag: "Done", summary: "every stream already backfilled since the request" } as const) : outcomeOf(reports[reports.length - 1])
      })

    const run = (job: AccountJob): Effect.Effect<WorkOutcome, SqlError.SqlError> => {
      switch (job.kind) {
        case "sync":
          return Effect.map(runner.run({ mode: "sync", accounts: [job.accountId], concurrency: 1 }), (reports) => outcomeOf(only(reports, job.accountId)))
        case "backfill":
          return backfill(job)
        case "events":
          return Effect.gen(function* () {
            const report = yield* consumer.drain(job.accountId)
            if (report.outcome === "locked") return { _tag: "Later", after: lockedRetry, why: "another process holds the account" } as const
            const summary = `${report.applied} event(s) applied, ${report.failed} failed, ${report.deferred} deferred (${report.outcome})`
            // events still settling or waiting out a retry's backoff: the job comes back when the first is due
            const next = report.outcome === "drained" ? yield* events.nextAttemptAt(job.accountId) : null
            const now = yield* Clock.currentTimeMillis
            if (next !== null && next.getTime() > now) return { _tag: "Later", after: Duration.millis(next.getTime() - now), why: `${summary}; more due later` } as const
            return { _tag: "Done", summary } as const
          })
      }
    }
    return AccountWork.of({ run })
  })
)

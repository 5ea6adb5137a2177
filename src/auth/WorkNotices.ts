import { Context, Data, type Effect } from "effect"

/** The work could not be enqueued: which, and why (the queue's own error, as text). */
export class WorkNoticeFailed extends Data.TaggedError("WorkNoticeFailed")<{ readonly work: string; readonly reason: string }> {
  override get message() {
    return `${this.work} could not be enqueued: ${this.reason}`
  }
}

/**
 * A port of the receiving side, implemented by the job queue (sync/jobs/JobQueue.ts: workNoticesOf), so auth/ needs
 * nothing of sync/. Where the receiving side (serve's OAuth callback and webhooks, `connect`) tells the workers of new work, when
 * workers run (WORKERS=true): a new connection's backfill, an account's change events. Absent, nothing is enqueued
 * and the one-shot commands or serve's own consumer do the work. Called after what it is about committed (a
 * connection's tokens must never roll back with a failed enqueue): when it fails, the schedule's next tick finds the
 * account due (never synced; events pending) and enqueues it.
 */
export class WorkNotices extends Context.Tag("account-sync/WorkNotices")<
  WorkNotices,
  {
    /** A connection became active: its backfill job, at once. */
    readonly connected: (accountId: string) => Effect.Effect<void, WorkNoticeFailed>
    /** Change events of the account wait from `dueAt`: an events job then (repeats collapse into the one waiting). */
    readonly changed: (accountId: string, dueAt: Date) => Effect.Effect<void, WorkNoticeFailed>
  }
>() {}

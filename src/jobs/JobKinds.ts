import { Schema } from "effect"

/**
 * The work of one account, as a job of the queue. Every kind shares one pg-boss queue whose key is the account: its
 * `singleton` policy lets one job per key be active, so one account never has two jobs running at once, whatever
 * their kinds (pg-boss's key policies are per queue: a queue per kind could not exclude a sync beside an events job).
 */
const Common = {
  accountId: Schema.NonEmptyTrimmedString,
  /** When the work became due (ISO): the base of its priority and of the due-to-start latency. */
  dueAt: Schema.String
}

/** Its due incremental passes, and a full pass where one is due or in progress. */
export const SyncJob = Schema.Struct({ kind: Schema.Literal("sync"), ...Common })
/**
 * A full pass of `streams` (all configured ones when absent). `requestedAt`: a stream whose full pass finished after
 * this is done (a follow-up or a retry skips it); `restart` forgets a pass in progress begun before it.
 */
export const BackfillJob = Schema.Struct({
  kind: Schema.Literal("backfill"),
  ...Common,
  streams: Schema.optional(Schema.Array(Schema.String)),
  restart: Schema.Boolean,
  requestedAt: Schema.String
})
/** The account's queued change events (webhook_events). */
export const EventsJob = Schema.Struct({ kind: Schema.Literal("events"), ...Common })

export const AccountJob = Schema.Union(SyncJob, BackfillJob, EventsJob)
export type AccountJob = typeof AccountJob.Type
export type JobKind = AccountJob["kind"]
export const jobKinds: ReadonlyArray<JobKind> = ["sync", "backfill", "events"]

export const decodeAccountJob = Schema.decodeUnknown(AccountJob)

/** The queue of account work, its dead letters, and the schedule's tick. */
export const QueueNames = {
  accounts: "account-work",
  deadLetters: "account-work-dead",
  tick: "account-schedule"
} as const

/**
 * pg-boss claims the highest priority first, then the oldest: an account's priority is how many seconds its work is
 * overdue when enqueued, so the most overdue account runs first. Change events and a new connection's backfill count
 * as an hour overdue from the start: they are what a person waits for.
 */
export const priorityOf = (job: AccountJob, nowMs: number): number => {
  const overdue = Math.max(0, Math.floor((nowMs - Date.parse(job.dueAt)) / 1000))
  const boost = job.kind === "sync" ? 0 : 3600
  return Math.min(overdue + boost, 1_000_000_000)
}

/**
 * The job that carries on after `job` worked its slice: the same account and kind, due now (behind the accounts
 * that waited longer, so slices of many accounts take turns), never restarting again.
 */
export const followUpOf = (job: AccountJob, nowMs: number): AccountJob => {
  const dueAt = new Date(nowMs).toISOString()
  return job.kind === "backfill" ? { ...job, dueAt, restart: false } : { ...job, dueAt }
}

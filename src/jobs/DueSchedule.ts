import { Duration, Option } from "effect"
import type { Checkpoint } from "../sync/model.js"
import type { AnyStream } from "../sync/streams/Stream.js"

export interface DueInput {
  /** The account's streams (the configured ones), each with its full-pass cadence. */
  readonly streams: ReadonlyArray<{ readonly stream: AnyStream; readonly fullPassEvery: Duration.Duration }>
  readonly checkpoints: ReadonlyMap<string, Checkpoint> | undefined
  /** When the service's token says the account was connected (the service's clock). */
  readonly connectedAt: Date
  readonly incrementalEvery: Duration.Duration
  /** This process's time now. */
  readonly now: Date
}

/**
 * When an account's next sync is due: the earliest of its streams' due times. A stream that never finished a full
 * pass, or has one in progress, is due since it was connected (or since that pass began); otherwise its full pass is
 * due a cadence after the last one began, sooner when a change event asked for one, and its incremental pass (where
 * the collection has incremental access) SYNC_INCREMENTAL_EVERY after the last one.
 */
export const nextDueAt = (input: DueInput): Date => {
  // dated by the service's clock, which may run ahead of ours: a new connection is due at once, not when ours catches up
  const connectedAt = Math.min(input.connectedAt.getTime(), input.now.getTime())
  let due = Number.POSITIVE_INFINITY
  for (const { stream, fullPassEvery } of input.streams) {
    const c = input.checkpoints?.get(stream.name)
    if (c === undefined || c.lastFullPassAt === null) {
      due = Math.min(due, c?.passStartedAt?.getTime() ?? connectedAt)
      continue
    }
    if (c.passKind === "full") due = Math.min(due, c.passStartedAt?.getTime() ?? c.lastFullPassAt.getTime())
    const lastFull = c.lastFullPassAt.getTime()
    due = Math.min(due, lastFull + Duration.toMillis(fullPassEvery))
    if (c.fullPassRequestedAt !== null && c.fullPassRequestedAt.getTime() > lastFull) due = Math.min(due, c.fullPassRequestedAt.getTime())
    // the strategy says whether the collection has incremental access (never interpreted by name)
    if (Option.isSome(stream.incremental.plan(new Date(lastFull)))) {
      due = Math.min(due, (c.lastIncrementalPassAt?.getTime() ?? lastFull) + Duration.toMillis(input.incrementalEvery))
    }
  }
  return new Date(Number.isFinite(due) ? due : connectedAt)
}

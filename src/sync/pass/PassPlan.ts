import { Duration, Option } from "effect"
import type { Incremental, IncrementalPass } from "./Incremental.js"
import type { Checkpoint, PassKind } from "../model.js"

/** `sync`: incremental where possible, full when due; `backfill`: a full pass of every stream. */
export type Mode = "sync" | "backfill"

/** What a run does with one stream of one account. */
export type PassDecision =
  | { readonly _tag: "Full"; readonly reason: "backfill" | "first" | "resume" | "due" | "requested" }
  | { readonly _tag: "Incremental"; readonly pass: IncrementalPass; readonly since: Date }
  /**
   * A stream with no incremental access whose full pass is not due yet, or (`nextIncrementalAt`) one whose change
   * events flow and whose last incremental pass is recent enough.
   */
  | { readonly _tag: "UpToDate"; readonly nextFullPassAt: Date; readonly nextIncrementalAt?: Date }

export interface PassInput {
  readonly mode: Mode
  readonly incremental: Incremental
  readonly checkpoint: Option.Option<Checkpoint>
  readonly nowMs: number
  readonly fullPassEvery: Duration.Duration
  /** How far before the mark an incremental pass starts reading (clock skew, same-second updates). */
  readonly overlap: Duration.Duration
  /** The stream's change events flow: an incremental pass is needed only this long after the last one. */
  readonly incrementalEveryWithEvents?: Duration.Duration
}

/**
 * The pass a run makes. A full pass when asked (backfill), when the stream never finished one, when one is in
 * progress (it resumes) or when the last one is older than the cadence; otherwise the stream's incremental pass from
 * its mark (or, when no row was ever seen, from the start of the last full pass) minus the overlap; a stream without
 * incremental access waits for its cadence.
 */
export const decidePass = (input: PassInput): PassDecision => {
  if (input.mode === "backfill") return { _tag: "Full", reason: "backfill" }
  if (Option.isNone(input.checkpoint) || input.checkpoint.value.lastFullPassAt === null) return { _tag: "Full", reason: "first" }
  const checkpoint = input.checkpoint.value
  if (checkpoint.passKind === "full") return { _tag: "Full", reason: "resume" }
  const lastFull = checkpoint.lastFullPassAt!.getTime()
  const nextFullPassAt = lastFull + Duration.toMillis(input.fullPassEvery)
  if (input.nowMs >= nextFullPassAt) return { _tag: "Full", reason: "due" }
  if (checkpoint.fullPassRequestedAt !== null && checkpoint.fullPassRequestedAt.getTime() > lastFull) return { _tag: "Full", reason: "requested" }
  const lastIncremental = checkpoint.lastIncrementalPassAt?.getTime()
  if (input.incrementalEveryWithEvents !== undefined && lastIncremental !== undefined) {
    const nextIncrementalAt = lastIncremental + Duration.toMillis(input.incrementalEveryWithEvents)
    if (input.nowMs < nextIncrementalAt) return { _tag: "UpToDate", nextFullPassAt: new Date(nextFullPassAt), nextIncrementalAt: new Date(nextIncrementalAt) }
  }
  const mark = checkpoint.highWaterMark?.getTime() ?? lastFull
  const since = new Date(mark - Duration.toMillis(input.overlap))
  return Option.match(input.incremental.plan(since), {
    onNone: () => ({ _tag: "UpToDate", nextFullPassAt: new Date(nextFullPassAt) }),
    onSome: (pass) => ({ _tag: "Incremental", pass, since })
  })
}

/** A decision to make a pass (full or incremental). */
export type PassToMake = Exclude<PassDecision, { readonly _tag: "UpToDate" }>

export const passKindOf = (decision: PassToMake): PassKind =>
  decision._tag === "Full" ? "full" : "incremental"

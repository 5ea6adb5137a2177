import type { PassKind } from "../sync/model.js"
import type { PassDecision } from "../sync/pass/PassPlan.js"
import type { Classified, RunOutcome } from "../sync/RunOutcome.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { type RunCounts, zeroCounts } from "./Runs.js"

/** One stream of one account in a run: what the summary and `sync_runs` say about it. */
export interface StreamReport {
  readonly stream: string
  /** The pass made, or "none" when a stream without incremental access was not due for its full pass. */
  readonly kind: PassKind | "none"
  readonly outcome: RunOutcome | "up-to-date"
  readonly resumed: boolean
  readonly counts: RunCounts
  /** How long the stream's run took (0 when it was up to date). */
  readonly durationMs: number
  readonly error?: string
  /** A stream that waits for its full pass: when it is due. */
  readonly nextFullPassAt?: Date
  /** A stream whose change events flow: when its next incremental pass is due. */
  readonly nextIncrementalAt?: Date
}

export interface StreamRunResult {
  readonly report: StreamReport
  readonly classified: Classified
  /** The pass asked for another stream's full pass (rows linked to records it found changed could not be read again). */
  readonly askedFullPass?: boolean
}

/** A stream not due for a pass. */
export const upToDate = (stream: AnyStream, decision: Extract<PassDecision, { readonly _tag: "UpToDate" }>): StreamRunResult => ({
  report: {
    stream: stream.name,
    kind: "none",
    outcome: "up-to-date",
    resumed: false,
    counts: zeroCounts,
    durationMs: 0,
    nextFullPassAt: decision.nextFullPassAt,
    ...(decision.nextIncrementalAt ? { nextIncrementalAt: decision.nextIncrementalAt } : {})
  },
  classified: { outcome: "succeeded" }
})

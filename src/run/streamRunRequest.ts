import type { Option } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import type { AccessTokenError } from "../auth/errors.js"
import type { Checkpoint } from "../sync/model.js"
import type { Mode } from "../sync/pass/PassPlan.js"
import type { AnyStream } from "../sync/streams/Stream.js"

/** One stream of one account to run, as SyncRunner asks it. */
export interface StreamRunRequest {
  readonly credentials: AccountCredentials<AccessTokenError>
  /** The account's name and the stream's place among the run's streams (`streamNumber` of `streams`): progress shows them. */
  readonly accountName: string
  readonly streamNumber: number
  readonly streams: number
  readonly stream: AnyStream
  readonly mode: Mode
  /** backfill: forget the checkpoint and start the full pass over. */
  readonly restart: boolean
  /** What decides the pass, read with the account's other streams' (`decisionInputs`); absent: read for this stream. */
  readonly inputs?: DecisionInputs
}

/** What decides a stream's pass besides the settings: its checkpoint and when its change events were last applied. */
export interface DecisionInputs {
  readonly checkpoint: Option.Option<Checkpoint>
  readonly eventsAppliedAt: Date | null
}

import { Schema } from "effect"
import type { Checkpoint } from "../model.js"

export const CheckpointRow = Schema.Struct({
  pass_kind: Schema.NullOr(Schema.Literal("full", "incremental")),
  partition: Schema.Number,
  position: Schema.NullOr(Schema.Number),
  anchors: Schema.NullOr(Schema.Array(Schema.String)),
  shifted: Schema.Boolean,
  tracks_seen: Schema.Boolean,
  pass_started_at: Schema.NullOr(Schema.DateFromSelf),
  high_water_mark: Schema.NullOr(Schema.DateFromSelf),
  last_full_pass_at: Schema.NullOr(Schema.DateFromSelf),
  full_pass_requested_at: Schema.NullOr(Schema.DateFromSelf),
  last_incremental_pass_at: Schema.NullOr(Schema.DateFromSelf)
})

export const toCheckpoint = (r: typeof CheckpointRow.Type): Checkpoint => ({
  passKind: r.pass_kind,
  partition: r.partition,
  position: r.position ?? 0,
  anchors: r.anchors ?? [],
  shifted: r.shifted,
  tracksSeen: r.tracks_seen,
  passStartedAt: r.pass_started_at,
  highWaterMark: r.high_water_mark,
  lastFullPassAt: r.last_full_pass_at,
  fullPassRequestedAt: r.full_pass_requested_at,
  lastIncrementalPassAt: r.last_incremental_pass_at
})

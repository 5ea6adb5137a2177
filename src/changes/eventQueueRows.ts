import { Schema } from "effect"

/** The rows EventQueue reads from `webhook_events`. */

export const QueuedRow = Schema.Struct({
  event_id: Schema.String,
  topic: Schema.String,
  item_id: Schema.String,
  occurred_at: Schema.DateFromSelf,
  attempts: Schema.Number
})
export const AccountRow = Schema.Struct({ account_id: Schema.String })
export const DepthRow = Schema.Struct({ account_id: Schema.String, waiting: Schema.Number })
export const StatusRow = Schema.Struct({
  account_id: Schema.String,
  waiting: Schema.Number,
  waiting_for_reconnect: Schema.Number,
  oldest_waiting: Schema.NullOr(Schema.DateFromSelf),
  failed: Schema.Number,
  deferred: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  last_topic: Schema.NullOr(Schema.String),
  last_item: Schema.NullOr(Schema.String),
  last_applied_at: Schema.NullOr(Schema.DateFromSelf)
})
export const UnmatchedRow = Schema.Struct({ sent_account_id: Schema.String, events: Schema.Number, last_received_at: Schema.DateFromSelf })
export const IdRow = Schema.Struct({ event_id: Schema.String })

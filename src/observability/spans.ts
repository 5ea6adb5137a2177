import { Effect } from "effect"

/**
 * `Effect.withSpan` for the spans a sync makes per account, stream, page and batch: without the stack trace Effect
 * captures at each call for the span's source line (made whether or not tracing is on; the name says where it is).
 */
export const runSpan =
  (name: string, attributes: Record<string, unknown>) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withSpan(self, name, { attributes, captureStackTrace: false })

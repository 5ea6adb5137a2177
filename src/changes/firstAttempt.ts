/** A change is read again no sooner than a second after it (the event's time has second precision: later changes of that second share its id). */
const settleMs = 1000

/**
 * An event time ahead of the time it was received by more than this is the sender's clock error, not a change still
 * to come: the event waits no longer than this (and the settle) before it is applied.
 */
export const maxAheadMs = 60_000

/** When a received event is first due: a second after its change, but never more than `maxAheadMs` after it arrived. */
export const firstAttemptAt = (occurredAt: Date, receivedAt: Date): Date => {
  const wait = Math.min(Math.max(0, occurredAt.getTime() + settleMs - receivedAt.getTime()), maxAheadMs + settleMs)
  return new Date(receivedAt.getTime() + wait)
}

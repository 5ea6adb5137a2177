import { Clock, Duration, Effect } from "effect"

/** A deadline that came due this much later than it was set for: the process was stopped or starved meanwhile. */
const lateMs = 1_000

/** What a late deadline waits more, for an answer that arrived while the process was stopped to be read. */
const graceMs = 1_000

/**
 * `effect`, failed with `onTimeout()` when it has not ended `duration` after it began. A deadline that comes due late
 * (the process stopped by SIGSTOP, a paused VM) first waits `graceMs` more: on resuming, the timer runs before the
 * answer waiting in the socket is read, and a refresh whose answer was there would be given up and sent again with a
 * refresh token the service had already rotated (invalid_grant: the connection lost).
 */
export const timeoutWithPauseGrace = <A, E, R, E2>(effect: Effect.Effect<A, E, R>, duration: Duration.DurationInput, onTimeout: () => E2) =>
  Effect.raceFirst(
    effect,
    Effect.gen(function* () {
      const due = (yield* Clock.currentTimeMillis) + Duration.toMillis(duration)
      yield* Effect.sleep(duration)
      if ((yield* Clock.currentTimeMillis) - due > lateMs) yield* Effect.sleep(Duration.millis(graceMs))
      return yield* Effect.fail(onTimeout())
    })
  )

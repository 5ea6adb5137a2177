import { Duration, Schedule } from "effect"

/**
 * When a long-running loop starts again after it failed: 1 s doubling up to a minute, jittered, at most `times` in
 * a row (counted afresh after ten quiet minutes); then it fails for good.
 */
export const restartsInARow = (times: number) =>
  Schedule.exponential(Duration.seconds(1)).pipe(
    Schedule.union(Schedule.spaced(Duration.minutes(1))),
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(times)),
    Schedule.resetAfter(Duration.minutes(10))
  )

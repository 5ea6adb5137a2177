import { Clock, Duration, Effect, Ref } from "effect"
import type { EventQueue } from "./EventQueue.js"
import type { PageGate } from "../sync/paging/Pager.js"
import { describeError } from "../sync/RunOutcome.js"
import type { EventConsumer } from "./EventConsumer.js"
import { runSpan } from "../observability/spans.js"

/**
 * How often, at most, a pass looks for its account's due change events between two of its pages: the look is one
 * indexed statement, and the interval is a floor of the lag of an event that arrives mid-pass.
 */
export const eventsLookedForEvery = Duration.millis(250)

/**
 * The change events of a pass's account, applied between two of its pages by the run that holds the account, under
 * its lease and fenced by its epoch, instead of by an events job that waits for the pass (a backfill's slice) to end.
 * The look is one indexed statement, at most every `eventsLookedForEvery`; only when events are due are the pass's
 * page fetches paused (the gate: the events' queries and the pass's share the account's cost budget, one at a time) while they are
 * applied. Applying them never fails the pass: a failed event keeps its retry and backoff, and a lease that moved is
 * the pass's next write to find.
 */
export const eventsBetweenPages = (queue: EventQueue["Type"], consumer: EventConsumer["Type"], accountId: string, gate: PageGate) =>
  Effect.map(Ref.make(Number.NEGATIVE_INFINITY), (lookedAt) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (now - (yield* Ref.get(lookedAt)) < Duration.toMillis(eventsLookedForEvery)) return
      yield* Ref.set(lookedAt, now)
      if ((yield* queue.due(accountId, new Date(now), 1)).length === 0) return
      const report = yield* gate.alone(consumer.drainHeld(accountId))
      if (report.applied + report.failed + report.deferred > 0) {
        yield* Effect.logInfo(
          `between two pages: ${report.applied} change event(s) applied, ${report.failed} failed, ${report.deferred} deferred (${report.outcome})`
        )
      }
    }).pipe(
      Effect.catchAll((e) => Effect.logWarning(`applying the account's change events between two pages: ${describeError(e)}; they wait for the next look`)),
      Effect.catchAllDefect((defect) => Effect.logError("applying the account's change events between two pages failed unexpectedly", defect)),
      runSpan("events.betweenPages", { accountId })
    )
  )

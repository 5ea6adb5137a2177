import { Effect } from "effect"
import type { Answer, AnswerVerdict, Kept } from "./SweepPlan.js"
import { byIdVerdict } from "./SweepPlan.js"

/** What the questions about some candidates decided. */
export interface Settled {
  readonly alive: ReadonlyArray<string>
  readonly gone: ReadonlyArray<string>
  readonly keep: ReadonlyArray<Kept>
}

export const nothingSettled: Settled = { alive: [], gone: [], keep: [] }

/**
 * Follows a verdict of SweepPlan (byIdVerdict, byValueVerdict) through the counts and splits it asks for, until every
 * candidate it covers is decided. `count` is what the service counts under the filter of these ids (or of their value);
 * `returned`, what the question that led here returned.
 */
export const settle = <E, R>(
  verdict: AnswerVerdict,
  count: (ids: ReadonlyArray<string>) => Effect.Effect<number, E, R>,
  judge: (answer: Answer) => AnswerVerdict,
  returned: ReadonlyArray<string>
): Effect.Effect<Settled, E, R> =>
  Effect.gen(function* () {
    if (verdict._tag === "Decided") return verdict
    if (verdict._tag === "Count") {
      const next = yield* settle(judge({ asked: verdict.ids, returned, counted: yield* count(verdict.ids) }), count, judge, returned)
      return { ...next, alive: [...verdict.alive, ...next.alive] }
    }
    const halves = yield* Effect.forEach(
      verdict.halves.filter((h) => h.length > 0),
      (half) => settle({ _tag: "Count", alive: [], ids: half }, count, judge, [])
    )
    return { alive: [...verdict.alive, ...halves.flatMap((h) => h.alive)], gone: halves.flatMap((h) => h.gone), keep: halves.flatMap((h) => h.keep) }
  })

/** Candidates asked for by id that returned `returned`: the rest counted (and split) until each is alive, gone or withheld. */
export const settleById = <E, R>(asked: ReadonlyArray<string>, returned: ReadonlyArray<string>, count: (ids: ReadonlyArray<string>) => Effect.Effect<number, E, R>) =>
  settle(byIdVerdict({ asked, returned, counted: undefined }), count, byIdVerdict, [])

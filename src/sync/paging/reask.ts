import { reaskLimit } from "./Continuation.js"
import { describePlace, type Place } from "./place.js"

/**
 * The asks of one page until it joins the rows landed. A page is asked again at most `reaskLimit` times, spending at
 * most `reaskLimit` times the points of a full page on answers thrown away: past either, the pass fails naming what
 * the service did, rather than spend the points for ever.
 */
export interface Asking {
  /** Where the page was asked first, and where it is asked now. */
  readonly firstPlace: Place
  readonly place: Place
  /** Asks made before this one. */
  readonly asks: number
  /** Points spent on answers thrown away, and on counting the list to size the page (sizedToRest). */
  readonly wasted: number
  /** Why the last answer was thrown away. */
  readonly why: string
  /** The first ids of each answer: the same rows wherever asked tells a list that moves as fast as the pass. */
  readonly answers: ReadonlySet<string>
}

export const firstAsk = (place: Place, countPoints = 0): Asking => ({ firstPlace: place, place, asks: 0, wasted: countPoints, why: "", answers: new Set() })

/** The most points a page's asks may throw away: `reaskLimit` times what a full page of it is estimated to cost. */
export const pointsBound = (fullPageCost: number): number => reaskLimit * fullPageCost

export type NextAsk = { readonly _tag: "Ask" } | { readonly _tag: "Stuck"; readonly detail: string }

/** Whether the page may be asked (again) at `asking.place`, or the pass is stuck on it. */
export const nextAsk = (asking: Asking, bound: number): NextAsk => {
  const { asks, wasted } = asking
  if (asks <= reaskLimit && wasted <= bound) return { _tag: "Ask" }
  const same = asking.answers.size === 1 && asks > 1 ? "; every answer held the same rows, wherever the page was asked" : ""
  return {
    _tag: "Stuck",
    detail: `asked ${asks} times, from ${describePlace(asking.firstPlace)} back to ${describePlace(asking.place)}, ${Math.round(wasted)} points spent, and the page never joined the rows landed (last: ${asking.why}): the list keeps moving under the pass${same}`
  }
}

/** An answer came back: its first ids are remembered. */
export const answered = (asking: Asking, ids: ReadonlyArray<string>): Asking => ({
  ...asking,
  answers: new Set([...asking.answers, ids.slice(0, 3).join(",")])
})

/** The answer is thrown away (it cost `spent`, for `why` when given): the page is asked at `place`. */
export const askAgain = (asking: Asking, place: Place, spent: number, why?: string): Asking => ({
  ...asking,
  place,
  asks: asking.asks + 1,
  wasted: asking.wasted + spent,
  why: why ?? asking.why
})

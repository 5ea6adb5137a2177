import { Effect, Fiber } from "effect"
import { type Asked, sameAsk } from "./fetchAhead.js"

/**
 * The one page of a list fetched ahead (see fetchAhead), held between two pages of the walk: taken by the next ask if
 * it is asked exactly there with exactly its sizes, otherwise interrupted and nothing of it is used. Dropped too when
 * the page is asked again, when the list ends, when the walk fails and when the stream ends, however it ends.
 */
export interface PageAhead<A, E> {
  /** The page fetched ahead, if it was asked as `asked`; any other is dropped. The slot is empty after. */
  readonly take: (asked: Asked) => Effect.Effect<Fiber.RuntimeFiber<A, E> | undefined>
  /** Fetch `fetch`, asked as `asked`, ahead (the slot was emptied by `take`). */
  readonly start: <R>(asked: Asked, fetch: Effect.Effect<A, E, R>) => Effect.Effect<void, never, R>
  readonly drop: Effect.Effect<void>
  /** Whether a page is held ahead now. */
  readonly holds: () => boolean
}

export const makePageAhead = <A, E>(): PageAhead<A, E> => {
  const slot: { held?: { readonly asked: Asked; readonly fiber: Fiber.RuntimeFiber<A, E> } } = {}
  const drop = Effect.suspend(() => {
    const held = slot.held
    delete slot.held
    return held === undefined ? Effect.void : Fiber.interrupt(held.fiber)
  })
  return {
    take: (asked) =>
      Effect.suspend(() => {
        const held = slot.held
        if (held === undefined || !sameAsk(held.asked, asked)) return Effect.as(drop, undefined)
        delete slot.held
        return Effect.succeed(held.fiber)
      }),
    start: (asked, fetch) =>
      Effect.map(Effect.fork(fetch), (fiber) => {
        slot.held = { asked, fiber }
      }),
    drop,
    holds: () => slot.held !== undefined
  }
}

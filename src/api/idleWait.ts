import { Effect, FiberRef } from "effect"

/**
 * How a wait that does no work runs (a query waiting for its account's bucket to refill). Alone it is the wait
 * itself; a worker holding many accounts on few permits of CPU work sets it so that the wait hands its permit back
 * meanwhile (see WorkPermits), and a waiting account holds no slot.
 */
export const idleWaiting: FiberRef.FiberRef<(wait: Effect.Effect<void>) => Effect.Effect<void>> = FiberRef.unsafeMake((wait: Effect.Effect<void>) => wait)

/** `wait` as this fiber's idleWaiting runs it. */
export const idle = (wait: Effect.Effect<void>) => Effect.flatMap(FiberRef.get(idleWaiting), (around) => around(wait))

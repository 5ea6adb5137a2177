import { Effect, FiberRef } from "effect"

/**
 * A request to stop asking for pages, made by whoever runs passes under a deadline (a worker's slice). It takes effect
 * once the work has landed a batch: the pages fetched by then still land, so a pass stops at a page it landed and
 * nothing it paid for is thrown away; and a deadline shorter than the work's first answers (the account query, a
 * page slower than the slice) still lets the work advance by a batch. Unset (the default), a pass pages to its end.
 */
export class PagingStop {
  private requested = false
  private landed = false
  /** The deadline came: no page more once a batch has landed. */
  readonly request = Effect.sync(() => void (this.requested = true))
  readonly wasRequested = Effect.sync(() => this.requested)
  /** A batch of this work landed. */
  readonly batchLanded = Effect.sync(() => void (this.landed = true))
  /** No page more: the deadline came and the work has landed a batch. */
  readonly due = Effect.sync(() => this.requested && this.landed)
}

export const pagingStop = FiberRef.unsafeMake<PagingStop | undefined>(undefined)

/** Whether the pass's fiber is to ask for no page more (see PagingStop). */
export const pagingStopRequested: Effect.Effect<boolean> = Effect.flatMap(FiberRef.get(pagingStop), (stop) => (stop === undefined ? Effect.succeed(false) : stop.due))

/** Records that a batch of the fiber's work landed (see PagingStop). */
export const batchLanded: Effect.Effect<void> = Effect.flatMap(FiberRef.get(pagingStop), (stop) => (stop === undefined ? Effect.void : stop.batchLanded))

import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Ref, Stream } from "effect"
import type { Page } from "../../../src/sync/model.js"
import { gatherPages, pageBatches, prefetchPages } from "../../../src/sync/paging/Pager.js"

const page = (n: number): Page => ({
  partition: 0,
  offset: n - 1,
  first: 1,
  nodes: [{ node: { id: `job-${n}` }, raw: { id: `job-${n}` } }],
  newFrom: 0,
  position: n,
  fetchedAtMs: 0,
  mayHaveMore: true,
  body: Buffer.from(JSON.stringify({ data: { jobs: { nodes: [{ id: `job-${n}` }] } } })),
  shifted: false,
  checked: true,
  costPoints: 2,
  overheadPoints: 0
})
const numbers = (batches: Iterable<ReadonlyArray<Page>>) => [...batches].map((batch) => batch.map((p) => `c${p.position}`))

/** Waits (cooperatively) until `ref` holds at least `n`. */
const untilAtLeast = (ref: Ref.Ref<number>, n: number) =>
  Effect.repeat(Effect.zipRight(Effect.yieldNow(), Ref.get(ref)), { until: (v) => v >= n })

describe("pageBatches", () => {
  it.effect("while a batch lands, the pages fetched meanwhile wait and land together as the next batch (at most prefetchPages)", () =>
    Effect.gen(function* () {
      const produced = yield* Ref.make(0)
      // the first batch may gather up to prefetchPages itself: enough pages for a full second one after it
      const total = 2 * prefetchPages + 1
      const source = Stream.fromIterable(Array.from({ length: total }, (_, i) => page(i + 1))).pipe(Stream.tap(() => Ref.update(produced, (n) => n + 1)))
      let landed = 0
      const batches = yield* pageBatches(source, { prefetch: true }).pipe(
        Stream.tap((batch) =>
          // a slow first landing: the fetching side fills the queue and one more page waits to be offered
          Effect.zipRight(landed === 0 ? untilAtLeast(produced, batch.length + prefetchPages + 1) : Effect.void, Effect.sync(() => (landed += batch.length)))
        ),
        Stream.runCollect
      )
      const cursors = numbers(batches)
      expect(cursors.flat()).toEqual(Array.from({ length: total }, (_, i) => `c${i + 1}`))
      expect(cursors[1]).toHaveLength(prefetchPages)
      for (const batch of cursors) expect(batch.length).toBeGreaterThanOrEqual(1)
      for (const batch of cursors) expect(batch.length).toBeLessThanOrEqual(prefetchPages)
    })
  )

  it.effect("a batch of fewer than gatherPages waits a moment for the pages coming right behind it", () =>
    Effect.gen(function* () {
      // page 1, then pages 2 and 3 once the fetching fiber had its turn again: a batch taken at once would be page 1
      const source = Stream.concat(
        Stream.make(page(1)),
        Stream.concat(Stream.drain(Stream.fromEffect(Effect.repeatN(Effect.yieldNow(), 50))), Stream.make(page(2), page(3)))
      )
      const batches = yield* pageBatches(source, { prefetch: true }).pipe(Stream.runCollect)
      expect(gatherPages).toBeGreaterThan(3)
      expect(numbers(batches)).toEqual([["c1", "c2", "c3"]])
    })
  )

  it.effect("a failure behind pages in the queue reaches the consumer after those pages", () =>
    Effect.gen(function* () {
      const failing = yield* Deferred.make<void>()
      const source = Stream.concat(
        Stream.fromIterable([page(1), page(2), page(3)]),
        Stream.concat(Stream.drain(Stream.fromEffect(Deferred.succeed(failing, undefined))), Stream.fail("page 4 refused" as const))
      )
      const out = yield* pageBatches(source, { prefetch: true }).pipe(
        // the consumer arrives only after the failure was queued behind the pages
        Stream.tap(() => Effect.zipRight(Deferred.await(failing), Effect.repeatN(Effect.yieldNow(), 20))),
        Stream.either,
        Stream.runCollect
      )
      const items = Chunk.toReadonlyArray(out)
      expect(items.filter(Either.isRight).flatMap((e) => e.right.map((p) => `c${p.position}`))).toEqual(["c1", "c2", "c3"])
      expect(items.at(-1)).toEqual(Either.left("page 4 refused"))
      expect(items.filter(Either.isLeft)).toHaveLength(1)
    })
  )

  it.effect("without prefetch, one page per batch and nothing fetched ahead", () =>
    Effect.gen(function* () {
      const produced = yield* Ref.make(0)
      const ahead: Array<number> = []
      const source = Stream.fromIterable([page(1), page(2), page(3)]).pipe(Stream.tap(() => Ref.update(produced, (n) => n + 1)))
      let landed = 0
      const batches = yield* pageBatches(source, { prefetch: false }).pipe(
        Stream.tap((batch) =>
          Effect.gen(function* () {
            yield* Effect.repeatN(Effect.yieldNow(), 20)
            landed += batch.length
            ahead.push((yield* Ref.get(produced)) - landed)
          })
        ),
        Stream.runCollect
      )
      expect(numbers(batches)).toEqual([["c1"], ["c2"], ["c3"]])
      expect(ahead).toEqual([0, 0, 0])
    })
  )
})

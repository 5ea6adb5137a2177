import { Deferred, Effect, type Either, Exit, Queue, type Scope } from "effect"

interface Waiting<A, B, E> {
  readonly item: A
  readonly done: Deferred.Deferred<B, E>
}

/**
 * Group commit: items submitted while a group's statement runs wait together and are written by the next one (one
 * statement, one commit, for all of them), each caller resumed only once that statement has ended: with its own
 * result, or the group's failure. A lone item is written at once (no timer: the group is whatever arrived meanwhile).
 *
 * `write` answers per item, in the order given (an item's own error: the others of its group still succeed); when it
 * fails as a whole, every item of the group fails with that error. At most `maxGroup` items a statement, and up to
 * `writers` statements at once (default 1): an item waits for a free writer, not for the statement in flight to end.
 * The writers run until the scope closes; callers still waiting then are interrupted.
 */
export const makeGroupCommit = <A, B, E>(
  write: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<Either.Either<B, E>>, E>,
  maxGroup: number,
  writers = 1
): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    // released after the writer is interrupted: items it never took are interrupted too, not left waiting
    const waiting = yield* Effect.acquireRelease(Queue.unbounded<Waiting<A, B, E>>(), (queue) =>
      Queue.takeAll(queue).pipe(
        Effect.flatMap((left) => Effect.forEach(left, (w) => Deferred.interrupt(w.done), { discard: true })),
        Effect.zipRight(Queue.shutdown(queue))
      )
    )
    const writeGroup = (group: ReadonlyArray<Waiting<A, B, E>>) =>
      Effect.exit(write(group.map((w) => w.item))).pipe(
        Effect.flatMap((exit) =>
          Effect.forEach(
            group,
            (w, i) =>
              Deferred.done(
                w.done,
                Exit.flatMap(exit, (results) => {
                  const result = results[i]
                  if (result === undefined) return Exit.die(new Error(`group commit: ${results.length} results for ${group.length} items`))
                  return result._tag === "Right" ? Exit.succeed(result.right) : Exit.fail(result.left)
                })
              ),
            { discard: true }
          )
        ),
        // the writer interrupted mid-statement (shutdown): its callers are told, not left waiting
        Effect.onInterrupt(() => Effect.forEach(group, (w) => Deferred.interrupt(w.done), { discard: true }))
      )
    const writer = Queue.takeBetween(waiting, 1, maxGroup).pipe(
      Effect.flatMap((group) => writeGroup(Array.from(group))),
      Effect.forever
    )
    for (let n = 0; n < Math.max(1, writers); n++) yield* Effect.forkScoped(writer)
    return (item: A) =>
      Effect.flatMap(Deferred.make<B, E>(), (done) => Effect.zipRight(Queue.offer(waiting, { item, done }), Deferred.await(done)))
  })

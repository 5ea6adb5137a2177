import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Schedule } from "effect"
import { Worker } from "node:worker_threads"
import { type EventConsumerStopped, inWorker, type WorkerSupervision } from "../../../src/serve/consumerThread.js"

/** serve's supervision of its event-consumer thread, over stand-in threads that fail on purpose. */

const standIn = new URL("../../support/workers/consumerStandIn.mjs", import.meta.url)

// answerTimeout replaces a thread that hangs; a thread that answers late on a loaded machine is replaced by it too
const supervision = (restarts: number, answerTimeout = Duration.millis(500)): WorkerSupervision => ({
  startTimeout: Duration.seconds(20),
  heartbeat: Duration.millis(100),
  answerTimeout,
  scrapeTimeout: answerTimeout,
  restarts: Schedule.spaced(Duration.millis(50)).pipe(Schedule.intersect(Schedule.recurs(restarts)))
})

const spawning = (mode: "exits" | "hangs") => {
  const spawned: Array<number> = []
  const spawn = () => {
    spawned.push(spawned.length + 1)
    return new Worker(standIn, { workerData: { mode, generation: spawned.length } })
  }
  return { spawned, spawn }
}

/** Polls until `check` holds (a real thread's pace, not a timing rule), for at most 30 s. */
const eventually = (check: () => boolean) =>
  Effect.sync(check).pipe(
    Effect.filterOrFail((ok) => ok, () => "not yet"),
    Effect.retry(Schedule.spaced(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(30)))),
    Effect.orDie
  )

describe("serve's event-consumer thread", () => {
  it.live("a thread that ends is replaced, and /metrics shows the new one's figures", () =>
    Effect.gen(function* () {
      const { spawned, spawn } = spawning("exits")
      // 3 s to answer: a thread's end is seen when its next answer does not come, so each generation lasts about this
      const consumer = yield* inWorker(spawn, supervision(100, Duration.seconds(3)))
      const running = yield* Effect.fork(consumer.supervise)
      yield* eventually(() => spawned.length >= 2)
      // the figures of a later thread than the first (the last one that answered, or the one running now)
      const generation = Effect.map(
        Option.getOrThrow(consumer.metrics).current,
        (metrics) => metrics.find((m) => m.name === "account_sync_stand_in_generation")?.values[0]?.value
      )
      const shown = yield* generation.pipe(
        Effect.filterOrFail((g) => typeof g === "number" && g >= 2, () => "the first thread's figures"),
        Effect.retry(Schedule.spaced(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(30)))),
        Effect.orElse(() => generation)
      )
      expect(shown).toBeGreaterThanOrEqual(2)
      expect(running.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(running)
    })
  )

  it.live("a thread that stops answering is replaced", () =>
    Effect.gen(function* () {
      const { spawned, spawn } = spawning("hangs")
      const running = yield* Effect.fork((yield* inWorker(spawn, supervision(100))).supervise)
      yield* eventually(() => spawned.length >= 2)
      expect(running.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(running)
    })
  )

  it.live("after its bound of restarts, supervision fails and says why", () =>
    Effect.gen(function* () {
      const { spawned, spawn } = spawning("exits")
      const error: EventConsumerStopped = yield* Effect.flip((yield* inWorker(spawn, supervision(2))).supervise)
      expect(spawned.length).toBe(3)
      expect(error.message).toMatch(/^the change-event consumer stopped: its thread (failed|did not answer)/)
    })
  )
})

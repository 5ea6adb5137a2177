import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { ApiVersionLog, ApiVersionLogLive } from "../../../src/api/ApiVersionLog.js"
import { ApiVersionWatch, makeApiVersionWatch } from "../../../src/api/ApiVersionWatch.js"
import { ServiceEndpoint } from "../../../src/api/ServiceEndpoint.js"
import { makeLogCapture } from "../../support/auth.js"
import { TestDatabaseLive } from "../../support/database.js"

const pinned = "2025-01-20"

/** The watch for a pin and a policy, over the real api_versions table of the test schema. */
const watchFor = (versionReplaced: "fail" | "allow") =>
  Layer.effect(ApiVersionWatch, makeApiVersionWatch).pipe(
    Layer.provide(Layer.succeed(ServiceEndpoint, { baseUrl: "http://service.invalid", graphqlVersion: pinned, requestTimeout: Duration.seconds(5), versionReplaced, maxResponseBytes: 32 * 1024 * 1024 }))
  )

/** Whether `effect` failed, and the log lines (logfmt) it wrote. */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const logs = makeLogCapture()
    const result = yield* Effect.either(effect.pipe(Effect.provide(logs.layer)))
    return { result, lines: logs.lines }
  })

layer(Layer.provideMerge(ApiVersionLogLive, TestDatabaseLive), { timeout: 30_000, excludeTestServices: true })("ApiVersionWatch: each answer's extensions.versioning", (it) => {
  it.effect("no block, or one it cannot read, costs nothing (the unreadable one is said once); the pin's own answers are recorded", () =>
    Effect.gen(function* () {
      const watch = yield* ApiVersionWatch
      const log = yield* ApiVersionLog
      expect((yield* logged(watch.observe("Jobs", "query", undefined))).result._tag).toBe("Right")
      expect(yield* log.read(pinned)).toEqual(Option.none())
      const bad = yield* logged(Effect.zipRight(watch.observe("Jobs", "query", { warning: 5 }), watch.observe("Jobs", "query", "\u001b[2J")))
      expect(bad.result._tag).toBe("Right")
      expect(bad.lines.filter((l) => l.includes("extensions.versioning of the service's answer is not {version, warning?}"))).toHaveLength(1)
      expect(yield* log.read(pinned)).toEqual(Option.none())
      yield* watch.observe("Jobs", "query", { version: pinned })
      expect(Option.getOrThrow(yield* log.read(pinned))).toMatchObject({ answered: pinned, warning: null, warnedSince: null })
    }).pipe(Effect.provide(watchFor("fail")))
  )

  it.effect("another version's answer fails a query, not a mutation (it acted already), and not at all when allowed; each is recorded", () =>
    Effect.gen(function* () {
      const log = yield* ApiVersionLog
      const failing = yield* Effect.provide(ApiVersionWatch, watchFor("fail"))
      const query = yield* Effect.flip(failing.observe("Jobs", "query", { version: "2025-07-01" }))
      expect(query).toMatchObject({ _tag: "ApiVersionReplaced", operation: "Jobs", pinned, answered: "2025-07-01" })
      expect(yield* failing.observe("AppDisconnect", "mutation", { version: "2025-07-01", warning: "soon" })).toBeUndefined()
      const state = Option.getOrThrow(yield* log.read(pinned))
      expect(state).toMatchObject({ answered: "2025-07-01", warning: "soon" })
      // the warning's time is kept while it lasts; the answering version's from when it changed
      yield* failing.observe("Jobs", "query", { version: "2025-07-01", warning: "soon, really" }).pipe(Effect.either)
      const again = Option.getOrThrow(yield* log.read(pinned))
      expect(again.warnedSince).toEqual(state.warnedSince)
      expect(again.answeredSince).toEqual(state.answeredSince)
      expect(again.warning).toBe("soon, really")

      const allowing = yield* Effect.provide(ApiVersionWatch, watchFor("allow"))
      expect(yield* allowing.observe("Jobs", "query", { version: "2025-07-01" })).toBeUndefined()
      expect(Option.getOrThrow(yield* log.read(pinned))).toMatchObject({ answered: "2025-07-01", warning: null, warnedSince: null })
    })
  )
})

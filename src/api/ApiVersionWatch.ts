import { Clock, Context, Effect, Either, Layer, Metric, ParseResult, Ref, Schema } from "effect"
import * as Metrics from "../observability/metrics.js"
import { printable } from "../observability/printable.js"
import { ApiVersionLog, ApiVersionLogLive, type ApiVersionObservation } from "./ApiVersionLog.js"
import { ApiVersionReplaced } from "./errors.js"
import { ServiceEndpoint } from "./ServiceEndpoint.js"

/** `extensions.versioning` of an answer: the version that answered, and a warning while it nears its removal. */
export const Versioning = Schema.Struct({
  version: Schema.String,
  warning: Schema.optional(Schema.NullOr(Schema.String))
})
export type Versioning = typeof Versioning.Type
const decodeVersioning = Schema.decodeUnknownEither(Versioning)

export interface ApiVersionWatchShape {
  /**
   * Every answer's versioning: a warning is logged once per process and version and counted; what answered is
   * recorded when it changes (ApiVersionLog). An answer to a query from another version than the pin fails with
   * ApiVersionReplaced (unless SERVICE_GRAPHQL_VERSION_REPLACED=allow); a mutation's never does (it already acted).
   */
  readonly observe: (operation: string, kind: "query" | "mutation", versioning: unknown) => Effect.Effect<void, ApiVersionReplaced>
}

export class ApiVersionWatch extends Context.Tag("account-sync/ApiVersionWatch")<ApiVersionWatch, ApiVersionWatchShape>() {}

const same = (a: ApiVersionObservation | undefined, b: ApiVersionObservation) =>
  a !== undefined && a.answered === b.answered && a.warning === b.warning

export const makeApiVersionWatch = Effect.gen(function* () {
  const { graphqlVersion: pinned, versionReplaced } = yield* ServiceEndpoint
  const log = yield* ApiVersionLog
  /** The last state recorded by this process; a failed write is not remembered, so the next answer records it. */
  const recorded = yield* Ref.make<ApiVersionObservation | undefined>(undefined)
  /** What was logged already: `warning <version>` and `replaced <version>`. */
  const logged = yield* Ref.make<ReadonlySet<string>>(new Set())
  const writing = yield* Effect.makeSemaphore(1)

  const once = (key: string, effect: Effect.Effect<void>) =>
    Effect.flatMap(
      Ref.modify(logged, (seen) => (seen.has(key) ? [false, seen] : [true, new Set([...seen, key])])),
      (first) => (first ? effect : Effect.void)
    )

  const record = (observation: ApiVersionObservation) =>
    Effect.flatMap(Ref.get(recorded), (last) =>
      same(last, observation)
        ? Effect.void
        : writing.withPermits(1)(
            Effect.gen(function* () {
              if (same(yield* Ref.get(recorded), observation)) return
              const at = new Date(yield* Clock.currentTimeMillis)
              yield* log.record(observation, at)
              yield* Ref.set(recorded, observation)
            }).pipe(Effect.catchAll((e) => Effect.logWarning("could not record the API version the service answered with; retried with the next answer", e)))
          )
    )

  const observe: ApiVersionWatchShape["observe"] = (operation, kind, raw) =>
    Effect.gen(function* () {
      if (raw === undefined) return
      const decoded = decodeVersioning(raw)
      if (Either.isLeft(decoded)) {
        return yield* once(
          "unreadable",
          Effect.logWarning(`extensions.versioning of the service's answer is not {version, warning?}; not watched: ${printable(ParseResult.TreeFormatter.formatErrorSync(decoded.left))}`)
        )
      }
      const answered = decoded.right.version
      const warning = decoded.right.warning ?? null
      yield* record({ requested: pinned, answered, warning })
      if (warning !== null) {
        yield* Metric.increment(Metric.tagged(Metrics.apiVersionWarnings, "version", answered))
        yield* once(
          `warning ${answered}`,
          Effect.logWarning(`the service warns about API version ${printable(answered, 40)}: ${printable(warning)}`).pipe(
            Effect.annotateLogs({ apiVersion: answered, operation })
          )
        )
      }
      if (answered === pinned) return
      const replaced = new ApiVersionReplaced({ operation, pinned, answered })
      if (versionReplaced === "allow") {
        yield* once(
          `replaced ${answered}`,
          Effect.logWarning(
            `the service replaced the pinned API version ${pinned} with ${printable(answered, 40)}; going on, as SERVICE_GRAPHQL_VERSION_REPLACED=allow says`
          )
        )
        return
      }
      yield* once(`replaced ${answered}`, Effect.logError(replaced.message))
      if (kind === "query") return yield* replaced
    })

  return ApiVersionWatch.of({ observe })
})

/** Over the ServiceEndpoint (the pin and its policy) and the database (ApiVersionLog). */
export const ApiVersionWatchLive = Layer.effect(ApiVersionWatch, makeApiVersionWatch).pipe(Layer.provide(ApiVersionLogLive))

import { Config, ConfigError, Duration, Either } from "effect"
import { allStreams } from "./streams/index.js"
import { type AnyStream, excluding } from "./streams/Stream.js"

/** The streams a deployment syncs, as configured: which ones, which of their fields, how often a full pass. */
export interface StreamSelection {
  /** Every stream, with its configured exclusions applied (`--stream` picks from these). */
  readonly catalog: ReadonlyArray<AnyStream>
  /** What a run takes when `--stream` is not given (SYNC_STREAMS; default every stream). */
  readonly defaults: ReadonlyArray<AnyStream>
  /** SYNC_FULL_PASS_EVERY_<STREAM>: a stream's own cadence, over its definition's and SYNC_FULL_PASS_EVERY. */
  readonly fullPassEvery: ReadonlyMap<string, Duration.Duration>
}

export const fullPassEveryKey = (stream: string) => `SYNC_FULL_PASS_EVERY_${stream.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`

const invalid = (message: string) => Either.left(ConfigError.InvalidData([], message))

/** `jobs.instructions,jobs.lineItems` -> { jobs: [instructions, lineItems] }, every stream and field checked. */
const parseExclusions = (entries: ReadonlyArray<string>, streams: ReadonlyArray<AnyStream>) => {
  const byStream = new Map<string, Array<string>>()
  for (const entry of entries.map((e) => e.trim()).filter((e) => e.length > 0)) {
    const dot = entry.indexOf(".")
    const [stream, field] = dot < 0 ? [entry, ""] : [entry.slice(0, dot), entry.slice(dot + 1)]
    if (!streams.some((s) => s.name === stream)) {
      return invalid(`SYNC_EXCLUDE_FIELDS: \`${entry}\` names no stream (expected <stream>.<field>; the streams are ${streams.map((s) => s.name).join(", ")})`)
    }
    if (field.length === 0) return invalid(`SYNC_EXCLUDE_FIELDS: \`${entry}\`: expected <stream>.<field>, e.g. jobs.instructions`)
    byStream.set(stream, [...(byStream.get(stream) ?? []), field])
  }
  return Either.right(byStream)
}

const applyExclusions = (streams: ReadonlyArray<AnyStream>, byStream: ReadonlyMap<string, ReadonlyArray<string>>) => {
  const out: Array<AnyStream> = []
  for (const stream of streams) {
    try {
      out.push(excluding(stream, byStream.get(stream.name) ?? []))
    } catch (e) {
      return invalid(`SYNC_EXCLUDE_FIELDS: ${(e as Error).message}`)
    }
  }
  return Either.right(out)
}

/** The streams `names` (a setting's list, `key`) name, in catalog order; a name of no stream is refused naming it. */
export const streamsNamed = (key: string, names: ReadonlyArray<string>, catalog: ReadonlyArray<AnyStream>): Either.Either<ReadonlyArray<AnyStream>, ConfigError.ConfigError> => {
  const wanted = names.map((n) => n.trim()).filter((n) => n.length > 0)
  const unknown = wanted.filter((n) => !catalog.some((s) => s.name === n))
  if (unknown.length > 0) return invalid(`${key}: no stream named ${unknown.map((n) => `\`${n}\``).join(", ")} (the streams are ${catalog.map((s) => s.name).join(", ")})`)
  return Either.right(catalog.filter((s) => wanted.includes(s.name)))
}

const chooseDefaults = (names: ReadonlyArray<string>, catalog: ReadonlyArray<AnyStream>) =>
  names.every((n) => n.trim().length === 0) ? Either.right(catalog) : streamsNamed("SYNC_STREAMS", names, catalog)

/** SYNC_STREAMS, SYNC_EXCLUDE_FIELDS and SYNC_FULL_PASS_EVERY_<STREAM> over the given streams (default: all). */
export const StreamSelectionConfig = (streams: ReadonlyArray<AnyStream> = allStreams): Config.Config<StreamSelection> =>
  Config.all({
    names: Config.array(Config.string(), "SYNC_STREAMS").pipe(Config.withDefault([] as ReadonlyArray<string>)),
    exclude: Config.array(Config.string(), "SYNC_EXCLUDE_FIELDS").pipe(Config.withDefault([] as ReadonlyArray<string>)),
    cadences: Config.all(
      Object.fromEntries(streams.map((s) => [s.name, Config.option(Config.duration(fullPassEveryKey(s.name)))]))
    )
  }).pipe(
    Config.mapOrFail(({ names, exclude, cadences }) =>
      Either.gen(function* () {
        const catalog = yield* applyExclusions(streams, yield* parseExclusions(exclude, streams))
        const defaults = yield* chooseDefaults(names, catalog)
        const fullPassEvery = new Map<string, Duration.Duration>()
        for (const [name, cadence] of Object.entries(cadences)) if (cadence._tag === "Some") fullPassEvery.set(name, cadence.value)
        return { catalog, defaults, fullPassEvery } satisfies StreamSelection
      })
    )
  )

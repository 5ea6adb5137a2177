import { Config, ConfigError, Either } from "effect"
import { allStreams } from "../streams/index.js"
import type { AnyStream } from "../streams/Stream.js"

/** SYNC_HISTORY: the streams whose every version is kept (`<table>_history`): names, `all`, or nothing (off). */
export const HistoryConfig = (streams: ReadonlyArray<AnyStream> = allStreams): Config.Config<ReadonlyArray<AnyStream>> =>
  Config.array(Config.string(), "SYNC_HISTORY").pipe(
    Config.withDefault([] as ReadonlyArray<string>),
    Config.mapOrFail((entries) => {
      const names = entries.map((e) => e.trim()).filter((e) => e.length > 0)
      if (names.length === 1 && names[0]!.toLowerCase() === "all") return Either.right(streams)
      const unknown = names.filter((n) => !streams.some((s) => s.name === n))
      if (unknown.length > 0) {
        return Either.left(
          ConfigError.InvalidData(
            [],
            `SYNC_HISTORY: no stream named ${unknown.map((n) => `\`${n}\``).join(", ")} (expected \`all\` or some of ${streams.map((s) => s.name).join(", ")})`
          )
        )
      }
      return Either.right(streams.filter((s) => names.includes(s.name)))
    })
  )

/** The tables whose history a stream keeps: its own and its line items' (custom fields have none). */
export const historyTablesOf = (stream: AnyStream): ReadonlyArray<string> => [stream.table, ...stream.children.map((c) => c.table)]

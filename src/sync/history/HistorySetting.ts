import { Config, Either } from "effect"
import { streamsNamed } from "../StreamSelection.js"
import { allStreams } from "../streams/index.js"
import type { AnyStream } from "../streams/Stream.js"

/** SYNC_HISTORY: the streams whose every version is kept (`<table>_history`): names, `all`, or nothing (off). */
export const HistoryConfig = (streams: ReadonlyArray<AnyStream> = allStreams): Config.Config<ReadonlyArray<AnyStream>> =>
  Config.array(Config.string(), "SYNC_HISTORY").pipe(
    Config.withDefault([] as ReadonlyArray<string>),
    Config.mapOrFail((names) =>
      names.length === 1 && names[0]!.trim().toLowerCase() === "all" ? Either.right(streams) : streamsNamed("SYNC_HISTORY", names, streams)
    )
  )

/** The tables whose history a stream keeps: its own and its line items' (custom fields have none). */
export const historyTablesOf = (stream: AnyStream): ReadonlyArray<string> => [stream.table, ...stream.children.map((c) => c.table)]

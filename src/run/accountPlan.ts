import { Effect } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import type { Pager } from "../sync/paging/Pager.js"
import type { ProgressShape } from "./Progress.js"
import { requestedPointsPerRow } from "./progressEstimate.js"
import type { AnyStream } from "../sync/streams/Stream.js"

/**
 * A display that shows totals is told, before a backfill's first stream, how many rows each stream of the account
 * holds (one cheap count each), so it can show the account's time left, not only the stream's. A count that fails
 * leaves that stream unknown (the account's time left is then not shown); nothing else depends on it.
 */
export const planAccount = <E>(pager: Pager["Type"], progress: ProgressShape, credentials: AccountCredentials<E>, streams: ReadonlyArray<AnyStream>) =>
  progress.wantsTotals
    ? Effect.flatMap(
        Effect.forEach(streams, (stream) =>
          pager.count(credentials, stream, stream.fullPass).pipe(
            Effect.map((c) => ({ stream: stream.name, rows: c.total as number | undefined, requestedPointsPerRow: requestedPointsPerRow(stream) })),
            Effect.orElseSucceed(() => ({ stream: stream.name, rows: undefined, requestedPointsPerRow: requestedPointsPerRow(stream) }))
          )
        ),
        (planned) => progress.accountPlanned({ accountId: credentials.accountId, streams: planned })
      )
    : Effect.void

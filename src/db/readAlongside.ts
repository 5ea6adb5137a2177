import type { Statement } from "@effect/sql"
import type { Effect } from "effect"

/**
 * A read one module asks another's statement to carry (its query joined `FULL JOIN ... ON false`, so its rows come
 * back beside the host's, none of its columns named like the host's), saving a round trip: `use` picks its own rows
 * out of those the host did not claim. It never fails: a row it cannot use leaves its owner to read again alone.
 */
export interface ReadAlongside {
  readonly query: Statement.Fragment
  readonly use: (rows: ReadonlyArray<Record<string, unknown>>) => Effect.Effect<void>
}

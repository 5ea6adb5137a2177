import type { SqlClient, Statement } from "@effect/sql"
import type { Effect } from "effect"

/**
 * `host`'s rows and `other`'s in one statement, side by side (`FULL JOIN ... ON false`: every row has one side's
 * columns, the other's null), so a read another module needs rides on a round trip made anyway. The two must name no
 * column alike.
 */
export const joinedAlongside = (sql: SqlClient.SqlClient, host: Statement.Fragment, other: Statement.Fragment): Statement.Fragment =>
  sql`SELECT * FROM (${host}) h FULL JOIN (${other}) o ON false`

/**
 * A read one module asks another's statement to carry (joinedAlongside), saving a round trip: `use` picks its own rows
 * out of those the host did not claim. It never fails: a row it cannot use leaves its owner to read again alone.
 */
export interface ReadAlongside {
  readonly query: Statement.Fragment
  readonly use: (rows: ReadonlyArray<Record<string, unknown>>) => Effect.Effect<void>
}

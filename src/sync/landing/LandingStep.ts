import type { SqlClient, Statement } from "@effect/sql"
import type { HeldLease } from "../AccountLeases.js"
import type { PassProgress } from "../model.js"
import type { AnyStream } from "../streams/Stream.js"
import type { PageJson } from "./pageParams.js"

/** Everything one page statement lands: the values its steps take as parameters. */
export interface PageValues {
  readonly accountId: string
  readonly stream: AnyStream
  readonly page: PageJson
  /** The pass the rows belong to; undefined: rows read outside a pass (a re-read before a sweep, a change event). */
  readonly pass: PassProgress | undefined
  /** Whether the ids go to the pass's seen ids (a full pass, and rows re-read before its sweep). */
  readonly recordSeen: boolean
  /** When the rows were asked of the service (the first page of the batch): a row marked deleted after that stays so. */
  readonly fetchedAt: Date | undefined
  /** The account's lease this run holds (none: the caller holds none). */
  readonly lease: HeldLease | undefined
}

/**
 * One named step of the page statement: a data-modifying CTE `name AS (sql)`. Steps may read the CTEs before them
 * (`pass`, `page`, ...); everything runs in the one statement, so in one transaction and one round trip.
 */
export interface LandingStep {
  readonly name: string
  /** Its rows are line items kept live, not proven gone: the statement reports how many (`kept`). */
  readonly kept?: boolean
  readonly sql: (sql: SqlClient.SqlClient, values: PageValues) => Statement.Fragment
}
